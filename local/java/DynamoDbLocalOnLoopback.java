/*
 * Runs Amazon's DynamoDB Local listening on 127.0.0.1 only, and exits when its parent goes away.
 *
 * DynamoDB Local's own main (ServerRunner) has no host option: its Jetty server is built with
 * `new Server(port)`, which listens on every interface (`java -jar DynamoDBLocal.jar -help` lists
 * -port, -inMemory, -dbPath, -sharedDb, -cors, -delayTransientStatuses, -disableTelemetry, nothing
 * else). So this launcher builds the server the same way (same command line), sets the connector's
 * host to loopback before starting it, and skips main's telemetry set-up.
 *
 * The parent (local/emulators.ts) holds this process's stdin open; end of input means the parent
 * has exited, even by SIGKILL, so the JVM halts instead of holding its port. Run in Java's
 * single-file source mode (JEP 330), so there is no build step and nothing compiled in the repo.
 */
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class DynamoDbLocalOnLoopback {
  public static void main(String[] args) throws Exception {
    String host = System.getProperty("dynamodb.local.host", "127.0.0.1");
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server jetty = (Server) field.get(proxy);
    for (Connector connector : jetty.getConnectors()) {
      ((ServerConnector) connector).setHost(host);
    }

    Thread parentWatch = new Thread(() -> {
      try {
        while (System.in.read() != -1) {
          // Nothing is ever sent: only the end of input matters.
        }
      } catch (Exception ignored) {
        // A broken pipe means the same: the parent is gone.
      }
      Runtime.getRuntime().halt(0);
    }, "parent-watch");
    parentWatch.setDaemon(true);
    parentWatch.start();

    proxy.start();
    System.out.println("DynamoDB Local listening on " + host);
    proxy.join();
  }
}
