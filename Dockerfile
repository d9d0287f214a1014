# syntax=docker/dockerfile:1
#
# Tributary: build in the Rust image, run in a slim Debian with only the binary.
#
#   docker build -t tributary .
#   docker run --rm -p 127.0.0.1:8080:8080 -v tributary-data:/data tributary
#
# On the first start (a store with no users) `serve` prints the token of the admin user `admin`
# once, on stdout (`docker logs <container>` shows it again). Make more with
# `docker exec <container> tributary token create --user NAME --role ADMIN`.
# `-e TRIBUTARY_AUTH=off` turns tokens off for a local trial.
#
# The builder must be at least the newest rust-version among the locked dependencies
# (async-graphql 7.2 and uuid 1.29 need 1.89), not only the crate's own rust-version.

FROM rust:1.89-bookworm AS build
WORKDIR /src
COPY . .
# Cache mounts keep the registry and target dir between builds, so a source change does not
# re-download or rebuild every dependency. The binary is copied out of the cached target dir
# because a cache mount is not part of the image.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/usr/local/cargo/git \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin tributary \
    && install -m 0755 target/release/tributary /usr/local/bin/tributary

FROM debian:bookworm-slim
# ca-certificates: TLS to Neo4j (bolt+s://) checks the server against the system roots.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 tributary \
    && useradd --system --uid 10001 --gid tributary --home-dir /data --no-create-home tributary \
    && mkdir -p /data \
    && chown tributary:tributary /data
COPY --from=build /usr/local/bin/tributary /usr/local/bin/tributary
USER tributary:tributary
WORKDIR /data
# Defaults for every subcommand (`docker run ... tributary export` reads /data too). Flags win.
ENV TRIBUTARY_LISTEN=0.0.0.0:8080 \
    TRIBUTARY_DATA_DIR=/data
# The embedded store lives here; with NEO4J_URI set, nothing is written to it.
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/tributary"]
CMD ["serve", "--listen", "0.0.0.0:8080", "--data-dir", "/data"]
