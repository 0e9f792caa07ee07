/*
 * Runs Apache Iceberg's RESTCatalogServer (the server of the
 * apache/iceberg-rest-fixture image, configured from CATALOG_* environment
 * variables exactly as there) but listening on one host only.
 *
 * RESTCatalogServer always listens on every interface: it builds its Jetty
 * server from a port alone. The tests want it on loopback like the other
 * services, so this starts it, then moves its one connector to the host given
 * in argument 1 (port in argument 2) before anyone is told it is up.
 *
 * Run as a single-file source program by scripts/services/iceberg.sh:
 *   java -cp '<lib>/*' LoopbackRestCatalog.java 127.0.0.1 28181
 */
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.util.HashMap;
import java.util.Map;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

public class LoopbackRestCatalog {
  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: java LoopbackRestCatalog.java HOST PORT");
      System.exit(2);
    }
    String host = args[0];
    int port = Integer.parseInt(args[1]);

    // Its constructors are package-private; the classpath is the unnamed
    // module, so reflection may open them.
    Class<?> type = Class.forName("org.apache.iceberg.rest.RESTCatalogServer");
    Constructor<?> make = type.getDeclaredConstructor(Map.class);
    make.setAccessible(true);
    Map<String, String> config = new HashMap<>();
    config.put("rest.port", Integer.toString(port));
    Object server = make.newInstance(config);
    type.getMethod("start", boolean.class).invoke(server, false);

    Field field = type.getDeclaredField("httpServer");
    field.setAccessible(true);
    Server http = (Server) field.get(server);
    // Stop, rebind on the one host, start again: handlers and the catalog are kept.
    http.stop();
    for (Connector connector : http.getConnectors()) {
      ((ServerConnector) connector).setHost(host);
    }
    http.start();
    System.err.println("LoopbackRestCatalog: listening on http://" + host + ":" + port);
    http.join();
  }
}
