package tributary.neo4j;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.ConnectorPortRegister;
import org.neo4j.configuration.connectors.ConnectorType;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.internal.helpers.HostnamePort;
import org.neo4j.io.ByteUnit;
import org.neo4j.kernel.internal.GraphDatabaseAPI;

/**
 * Starts a real Neo4j Community DBMS (embedded, with the Bolt connector open on
 * loopback) for Tributary's integration tests.
 *
 * <pre>
 *   java -cp 'lib/*:neo4j-launcher.jar' tributary.neo4j.Launcher HOME_DIR [PORT]
 * </pre>
 *
 * HOME_DIR is created if missing; all Neo4j data and logs go under it.
 * PORT 0 or missing picks a free loopback port. Authentication is disabled, so
 * any user/password the client sends is accepted.
 *
 * Once the default database is online, exactly one line is printed to stdout:
 * {@code NEO4J_READY bolt://127.0.0.1:PORT}. SIGTERM / SIGINT shut the DBMS down
 * cleanly via a shutdown hook.
 */
public final class Launcher {
    private static final String HOST = "127.0.0.1";

    private Launcher() {}

    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable t) {
            // Neo4j leaves non-daemon threads behind; make a failed start exit.
            System.err.println("neo4j-launcher: startup failed");
            t.printStackTrace();
            System.exit(1);
        }
    }

    private static void run(String[] args) throws Exception {
        if (args.length < 1 || args.length > 2) {
            System.err.println("usage: Launcher HOME_DIR [PORT]   (PORT 0 or missing = pick a free port)");
            System.exit(2);
        }
        Path home = Paths.get(args[0]).toAbsolutePath();
        int port = args.length == 2 ? Integer.parseInt(args[1].trim()) : 0;
        if (port < 0 || port > 65535) {
            System.err.println("invalid port: " + port);
            System.exit(2);
        }
        boolean pickPort = port == 0;
        Files.createDirectories(home);

        // Keep the real stdout for the READY line only; everything else that
        // might get printed (Neo4j / log4j / netty chatter) goes to stderr.
        PrintStream ready = System.out;
        System.setOut(System.err);

        Path logs = home.resolve("logs");
        Files.createDirectories(logs);

        long started = System.nanoTime();
        DatabaseManagementService dbms = null;
        // When we pick the port ourselves there is a tiny race between probing
        // and Neo4j binding it; retry a few times with a fresh port. (Binding
        // Neo4j to port 0 would avoid the race but leave the advertised address,
        // used in routing tables for neo4j:// URIs, pointing at the wrong port.)
        for (int attempt = 1; dbms == null; attempt++) {
            if (pickPort) {
                port = freeLoopbackPort();
            }
            try {
                dbms = build(home, logs, port);
            } catch (RuntimeException e) {
                if (!pickPort || attempt >= 5) {
                    throw e;
                }
                System.err.println("neo4j-launcher: start on port " + port + " failed (" + e + "), retrying");
            }
        }
        final DatabaseManagementService service = dbms;
        final int boltPort = port;

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.err.println("neo4j-launcher: shutting down");
            try {
                service.shutdown();
            } catch (Throwable t) {
                t.printStackTrace();
            } finally {
                stopped.countDown();
            }
            System.err.println("neo4j-launcher: stopped");
        }, "neo4j-launcher-shutdown"));

        // Make sure the default database is really usable before announcing readiness.
        GraphDatabaseService db = service.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        try (var tx = db.beginTx()) {
            tx.execute("RETURN 1").close();
            tx.commit();
        }

        System.err.printf("neo4j-launcher: started in %d ms, home=%s%n",
                (System.nanoTime() - started) / 1_000_000, home);
        HostnamePort bound = ((GraphDatabaseAPI) db).getDependencyResolver()
                .resolveDependency(ConnectorPortRegister.class)
                .getLocalAddress(ConnectorType.BOLT);
        if (bound == null || bound.getPort() != boltPort) {
            System.err.println("neo4j-launcher: Bolt connector is not listening on port " + boltPort
                    + " (register says " + bound + "); see " + logs.resolve("debug.log"));
            System.exit(1);
        }
        ready.println("NEO4J_READY bolt://" + HOST + ":" + boltPort);
        ready.flush();

        stopped.await();
    }

    private static DatabaseManagementService build(Path home, Path logs, int port) {
        return new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(HOST, port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(HOST, port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(HttpConnector.enabled, false)
                .setConfig(HttpsConnector.enabled, false)
                // Auth off: the server accepts any user/password a driver sends.
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .setConfig(GraphDatabaseSettings.logs_directory, logs)
                // Never phone home (no network here besides loopback anyway).
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                .setConfig(GraphDatabaseInternalSettings.udc_network_enabled, false)
                // Small memory footprint by default (fits a JVM with -Xmx512m..1g); the
                // benchmarks size the page cache to the graph (scripts/neo4j-start's
                // TRIBUTARY_NEO4J_PAGECACHE sets this property).
                .setConfig(GraphDatabaseSettings.pagecache_memory,
                        ByteUnit.parse(System.getProperty("tributary.pagecache", "128m")))
                .setConfig(GraphDatabaseSettings.tx_state_max_off_heap_memory, ByteUnit.mebiBytes(64))
                .setConfig(GraphDatabaseSettings.memory_transaction_global_max_size, ByteUnit.mebiBytes(256))
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                // Netty's default graceful shutdown waits 2 x 5 s of "quiet period";
                // a throwaway test server does not need that.
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_timeout, Duration.ofSeconds(5))
                .build();
    }

    private static int freeLoopbackPort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(HOST, 0));
            return s.getLocalPort();
        }
    }
}
