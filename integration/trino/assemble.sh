#!/usr/bin/env bash
# Assembles a Trino 483 server from Maven Central artifacts (no server
# tarball is published there): trino-main and its runtime dependencies
# become lib/, the Iceberg plugin and its runtime dependencies plugin/iceberg/,
# and a small launcher (TrinoMain.java, beside this script) starts
# io.trino.server.Server. Done once into $LAKEHOLD_CACHE/trino-483; prints
# that directory. Needs mvn and a Java 25 JDK (TRINO_JAVA_HOME).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CACHE=${LAKEHOLD_CACHE:-$HOME/.cache/lakehold}
VERSION=483
out="$CACHE/trino-$VERSION"
JAVA_HOME=${TRINO_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
if [ ! -x "$JAVA_HOME/bin/java" ]; then
  echo "trino: no Java 25 JDK at $JAVA_HOME (set TRINO_JAVA_HOME); Trino 483 needs Java 25" >&2; exit 1
fi
if [ -f "$out/.complete" ]; then echo "$out"; exit 0; fi
rm -rf "$out.tmp"; mkdir -p "$out.tmp/build"
pom() { # ARTIFACT -> a pom whose only dependency is io.trino:ARTIFACT:VERSION
  cat <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>lakehold</groupId><artifactId>trino-$1</artifactId><version>1</version>
  <dependencies><dependency>
    <groupId>io.trino</groupId><artifactId>$1</artifactId><version>$VERSION</version>
  </dependency></dependencies>
</project>
POM
}
copy() { # ARTIFACT DIR
  pom "$1" >"$out.tmp/build/$1.xml"
  mvn -q -f "$out.tmp/build/$1.xml" dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$2" >&2
}
copy trino-main "$out.tmp/lib"
copy trino-iceberg "$out.tmp/plugin/iceberg"
# The published plugin jar lacks the ServiceLoader entry that the plugin
# zip's packaging adds; Trino finds plugins only through it.
mkdir -p "$out.tmp/build/services/META-INF/services"
echo io.trino.plugin.iceberg.IcebergPlugin >"$out.tmp/build/services/META-INF/services/io.trino.spi.Plugin"
"$JAVA_HOME/bin/jar" cf "$out.tmp/plugin/iceberg/lakehold-iceberg-plugin-service.jar" -C "$out.tmp/build/services" META-INF
"$JAVA_HOME/bin/javac" -d "$out.tmp/launcher" -cp "$out.tmp/lib/*" "$here/TrinoMain.java" >&2
touch "$out.tmp/.complete"
rm -rf "$out"; mv "$out.tmp" "$out"
echo "$out"
