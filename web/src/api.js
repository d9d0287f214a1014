// The page's only way to the server: POST /graphql, the public GraphQL API, with the token kept in
// this tab's session storage. Errors are sorted by their `extensions.code` into the few kinds the
// page explains to a person (missing token, missing permission, store unavailable, ...).

const TOKEN_KEY = 'tributary.token';

export function getToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function setToken(token) {
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // Storage off: the token lives for this page only.
  }
  memoryToken = token || null;
}

let memoryToken = null;

/** An error a person can act on: `kind` is one of unauthenticated, forbidden, unavailable,
 * not_found, bad_input, network, internal. */
export class ApiError extends Error {
  constructor(kind, message, errors = []) {
    super(message);
    this.kind = kind;
    this.errors = errors;
  }
}

const KINDS = {
  UNAUTHENTICATED: 'unauthenticated',
  FORBIDDEN: 'forbidden',
  UNAVAILABLE: 'unavailable',
  NOT_FOUND: 'not_found',
  BAD_USER_INPUT: 'bad_input',
  CONFLICT: 'bad_input',
};

export function kindOf(error) {
  return KINDS[error?.extensions?.code] ?? 'internal';
}

// Asked when the server says UNAUTHENTICATED: resolves to a new token, or null when the person
// declines. One question at a time, shared by the requests that were refused together.
let askForToken = async () => null;
let pendingAsk = null;
export function onTokenNeeded(fn) {
  askForToken = fn;
}

async function newToken(reason) {
  if (!pendingAsk) {
    pendingAsk = askForToken(reason).finally(() => {
      pendingAsk = null;
    });
  }
  return pendingAsk;
}

async function post(query, variables) {
  const headers = { 'content-type': 'application/json', accept: 'application/json' };
  const token = getToken() ?? memoryToken;
  if (token) headers.authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch('/graphql', { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  } catch (e) {
    throw new ApiError('network', `Cannot reach the Tributary server (${e.message}).`);
  }
  let body;
  try {
    body = await response.json();
  } catch {
    throw new ApiError(response.status === 503 ? 'unavailable' : 'internal', `The server answered ${response.status} without a GraphQL body.`);
  }
  return body;
}

/**
 * Runs one GraphQL request. Returns `{ data, errors }`; `errors` are the field errors of a partial
 * answer (a FORBIDDEN section, say). Throws an ApiError when the whole request failed. On
 * UNAUTHENTICATED it asks for a token and tries again, once per token given.
 */
export async function gql(query, variables = {}) {
  let reason = getToken() || memoryToken ? 'The server refused the token (401).' : 'This Tributary needs an API token (401).';
  for (;;) {
    const body = await post(query, variables);
    const errors = body.errors ?? [];
    const unauthenticated = errors.find((e) => kindOf(e) === 'unauthenticated');
    if (unauthenticated) {
      const token = await newToken(`${reason} ${unauthenticated.message}`);
      if (!token) throw new ApiError('unauthenticated', unauthenticated.message, errors);
      setToken(token);
      reason = 'The server refused that token too (401).';
      continue;
    }
    if (body.data == null && errors.length) {
      const first = errors[0];
      throw new ApiError(kindOf(first), first.message, errors);
    }
    return { data: body.data, errors };
  }
}

/** The field errors of a partial answer whose path starts with `name`. */
export function errorsAt(errors, name) {
  return errors.filter((e) => Array.isArray(e.path) && e.path[0] === name);
}
