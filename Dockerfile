# selmem: MCP memory server over streamable HTTP.
#   docker build -t selmem .
#   docker run --rm selmem token create --user alice     # prints a token once, and its entry
#   docker run -d -p 8080:8080 -v selmem-data:/data \
#     -e SELMEM_HTTP_AUTH_TOKENS='{"alice": {"sha256": "<hash>", "user": "alice"}}' selmem
# or OIDC: -e SELMEM_HTTP_AUTH_OIDC_ISSUER=https://idp.example.com/realms/acme
#          -e SELMEM_HTTP_AUTH_OIDC_AUDIENCE=selmem
# (or http.auth in /data/selmem.yaml). The server listens on 0.0.0.0, which
# it refuses to serve without authentication: with none configured the
# container stops at start with an error saying what to set. Only for a
# throwaway local trial: -e SELMEM_HTTP_INSECURE_NO_AUTH=true, with
# -p 127.0.0.1:8080:8080.
# Build stage: a static binary (pure Go: go-git, modernc SQLite).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/selmem ./cmd/selmem \
	&& mkdir -p /out/data

# Runtime: distroless static, non-root (uid 65532). No shell and no curl:
# the binary does its own health check.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/selmem /usr/local/bin/selmem
COPY --from=build --chown=65532:65532 /out/data /data
ENV SELMEM_HOME=/data \
	SELMEM_HTTP_ADDR=0.0.0.0:8080
VOLUME ["/data"]
EXPOSE 8080
USER nonroot:nonroot
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
	CMD ["/usr/local/bin/selmem", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/selmem"]
CMD ["serve"]
