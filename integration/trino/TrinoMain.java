// Starts a Trino server assembled from Maven Central jars: the launcher
// module of the official tarball is not published, so this stands in for
// it. Configuration comes from -Dconfig=etc/config.properties and
// -Dnode.* system properties, as with the tarball's launcher.
public final class TrinoMain {
    private TrinoMain() {}

    public static void main(String[] args) {
        new io.trino.server.Server().start("483");
    }
}
