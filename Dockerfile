# The catalog image, FROM scratch so that it builds offline: no base image
# to pull. Its context is the directory scripts/image.sh stages (a static
# binary built with CGO_ENABLED=0, the host's CA bundle and zoneinfo, and
# a passwd file naming the non-root user); build it with
#   scripts/image.sh            (podman or docker, whichever is there)
# Run it with a read-only root file system: the only writable path is the
# data volume (/data: the embedded SQLite file and the default warehouse).
FROM scratch
COPY catalog /usr/local/bin/catalog
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY zoneinfo /usr/share/zoneinfo
COPY passwd group /etc/
COPY --chown=65532:65532 data /data
USER 65532:65532
ENV CATALOG_LISTEN=0.0.0.0:8181 CATALOG_DATA_DIR=/data TMPDIR=/data/tmp
VOLUME /data
EXPOSE 8181
ENTRYPOINT ["/usr/local/bin/catalog"]
CMD ["serve"]
