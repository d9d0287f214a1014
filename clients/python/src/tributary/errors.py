"""Exceptions: every error the service answers carries its `extensions.code` and message."""

from __future__ import annotations

from typing import Any, Dict, List, Optional


class TributaryError(Exception):
    """An error answered by Tributary (or found by the client before asking).

    `code` is the service's `extensions.code` (`NOT_FOUND`, `FORBIDDEN`, `BAD_USER_INPUT`,
    `UNAUTHENTICATED`, `CONFLICT`, `UNAVAILABLE`, `OVERLOADED`, `TOO_MANY_REQUESTS`,
    `INTERNAL`, ...), `message` the service's message, `path` the GraphQL path of the field
    that failed, `errors` every error of the answer as sent, `status` the HTTP status and
    `retry_after` the `Retry-After` header's seconds when the service sent one.
    """

    code: Optional[str]

    def __init__(
        self,
        message: str,
        code: Optional[str] = None,
        *,
        path: Optional[List[Any]] = None,
        errors: Optional[List[Dict[str, Any]]] = None,
        status: Optional[int] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(f"{code}: {message}" if code else message)
        self.message = message
        self.code = code
        self.path = path
        self.errors = errors or []
        self.status = status
        self.retry_after = retry_after


class NotFoundError(TributaryError):
    """`NOT_FOUND`: the table, job, field or edge does not exist (or a name matches nothing)."""


class ForbiddenError(TributaryError):
    """`FORBIDDEN`: the token lacks a permission; the message names it and the datastores."""


class BadInputError(TributaryError):
    """`BAD_USER_INPUT`: an invalid argument, or a query over the service's limits."""


class AmbiguousNameError(BadInputError):
    """A table or job name that matches several equally well; `candidates` names them."""

    def __init__(self, message: str, candidates: List[str]) -> None:
        super().__init__(message, "BAD_USER_INPUT")
        self.candidates = candidates


class UnauthenticatedError(TributaryError):
    """`UNAUTHENTICATED`: a missing, unknown or revoked token."""


class UnavailableError(TributaryError):
    """`UNAVAILABLE`, `OVERLOADED` or `TOO_MANY_REQUESTS`: try again (see `retry_after`)."""


_BY_CODE = {
    "NOT_FOUND": NotFoundError,
    "FORBIDDEN": ForbiddenError,
    "BAD_USER_INPUT": BadInputError,
    "UNAUTHENTICATED": UnauthenticatedError,
    "UNAVAILABLE": UnavailableError,
    "OVERLOADED": UnavailableError,
    "TOO_MANY_REQUESTS": UnavailableError,
}

# The code a REST-style answer without one means, by HTTP status.
_BY_STATUS = {
    400: "BAD_USER_INPUT",
    401: "UNAUTHENTICATED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    409: "CONFLICT",
    413: "BAD_USER_INPUT",
    422: "BAD_USER_INPUT",
    429: "TOO_MANY_REQUESTS",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def error_for(
    message: str,
    code: Optional[str],
    **kwargs: Any,
) -> TributaryError:
    """The exception of the class that `code` maps to."""
    return _BY_CODE.get(code or "", TributaryError)(message, code, **kwargs)
