# Multi-stage build: a static binary on a distroless base, run as non-root.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/catalog ./cmd/catalog

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/catalog /usr/local/bin/catalog
USER nonroot:nonroot
ENV CATALOG_LISTEN=0.0.0.0:8181 CATALOG_DATA_DIR=/home/nonroot/data
EXPOSE 8181
ENTRYPOINT ["/usr/local/bin/catalog"]
CMD ["serve"]
