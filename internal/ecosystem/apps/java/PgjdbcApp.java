// pgjdbc with a HikariCP pool, default options: DDL, DatabaseMetaData
// (product, tables, columns, primary and imported keys, indexes, type
// info: what tools and ORMs read), prepared statements with batches,
// numeric, a transaction with a savepoint rolled back after a unique
// violation, and CopyManager in and out.
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.StringReader;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.net.URI;
import java.sql.*;
import java.util.*;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;

public class PgjdbcApp {
    interface Step { void run() throws Exception; }

    static HikariDataSource ds;

    // firstError names the database's error if there is one in the chain,
    // else the deepest exception with a message.
    static String firstError(Throwable e) {
        Throwable pick = e;
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.sql.SQLException) { pick = t; break; }
            if (t.getMessage() != null) pick = t;
        }
        return (pick.getClass().getSimpleName() + ": " + pick.getMessage()).replaceAll("\\s+", " ");
    }

    static void check(boolean cond, String what) {
        if (!cond) throw new AssertionError(what);
    }

    public static void main(String[] args) {
        LinkedHashMap<String, Step> steps = new LinkedHashMap<>();
        steps.put("pool", PgjdbcApp::pool);
        steps.put("create_schema", PgjdbcApp::createSchema);
        steps.put("metadata", PgjdbcApp::metadata);
        steps.put("batch_insert", PgjdbcApp::batchInsert);
        steps.put("savepoint", PgjdbcApp::savepoint);
        steps.put("copy_manager", PgjdbcApp::copyManager);
        int code = 0;
        for (Map.Entry<String, Step> s : steps.entrySet()) {
            try {
                s.getValue().run();
                System.out.println("ok " + s.getKey());
            } catch (Throwable e) {
                e.printStackTrace(System.out);
                System.out.println("FAIL " + s.getKey() + ": " + firstError(e));
                code = 1;
                break;
            }
        }
        if (ds != null) ds.close();
        System.exit(code);
    }

    static void pool() throws Exception {
        URI u = URI.create(System.getenv("DATABASE_URL"));
        String[] user = u.getUserInfo().split(":", 2);
        HikariConfig cfg = new HikariConfig();
        cfg.setJdbcUrl("jdbc:postgresql://" + u.getHost() + ":" + u.getPort() + u.getPath());
        cfg.setUsername(user[0]);
        if (user.length > 1) cfg.setPassword(user[1]);
        cfg.setMaximumPoolSize(3);
        ds = new HikariDataSource(cfg);
        try (Connection c = ds.getConnection()) {
            check(c.isValid(5), "valid connection");
        }
    }

    static void createSchema() throws Exception {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE dept (id serial PRIMARY KEY, name varchar(60) NOT NULL UNIQUE)");
            st.execute("CREATE TABLE emp (id bigserial PRIMARY KEY, dept_id integer NOT NULL REFERENCES dept(id),"
                    + " name varchar(80) NOT NULL, salary numeric(10,2) NOT NULL, UNIQUE (dept_id, name))");
            st.execute("CREATE INDEX emp_salary_idx ON emp (salary)");
        }
    }

    static void metadata() throws Exception {
        try (Connection c = ds.getConnection()) {
            DatabaseMetaData md = c.getMetaData();
            check("PostgreSQL".equals(md.getDatabaseProductName()), "product " + md.getDatabaseProductName());
            check(md.getDatabaseMajorVersion() >= 15, "major version " + md.getDatabaseMajorVersion());
            List<String> tables = new ArrayList<>();
            try (ResultSet rs = md.getTables(null, "public", "%", new String[] {"TABLE"})) {
                while (rs.next()) tables.add(rs.getString("TABLE_NAME"));
            }
            check(tables.equals(List.of("dept", "emp")), "tables " + tables);
            Map<String, String> cols = new LinkedHashMap<>();
            try (ResultSet rs = md.getColumns(null, "public", "emp", "%")) {
                while (rs.next()) cols.put(rs.getString("COLUMN_NAME"), rs.getString("TYPE_NAME") + "(" + rs.getInt("COLUMN_SIZE") + "," + rs.getInt("DECIMAL_DIGITS") + ")");
            }
            check(cols.keySet().equals(new LinkedHashSet<>(List.of("id", "dept_id", "name", "salary"))), "columns " + cols);
            check(cols.get("salary").equals("numeric(10,2)"), "salary " + cols.get("salary"));
            try (ResultSet rs = md.getPrimaryKeys(null, "public", "emp")) {
                check(rs.next() && rs.getString("COLUMN_NAME").equals("id"), "primary key");
            }
            try (ResultSet rs = md.getImportedKeys(null, "public", "emp")) {
                check(rs.next() && rs.getString("PKTABLE_NAME").equals("dept") && rs.getString("FKCOLUMN_NAME").equals("dept_id"), "imported key");
            }
            Set<String> idx = new TreeSet<>();
            try (ResultSet rs = md.getIndexInfo(null, "public", "emp", false, false)) {
                while (rs.next()) idx.add(rs.getString("INDEX_NAME"));
            }
            check(idx.contains("emp_salary_idx") && idx.contains("emp_pkey"), "indexes " + idx);
            try (ResultSet rs = md.getTypeInfo()) {
                check(rs.next(), "type info");
            }
        }
    }

    static void batchInsert() throws Exception {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            int dept;
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO dept (name) VALUES (?)", Statement.RETURN_GENERATED_KEYS)) {
                ps.setString(1, "research");
                ps.executeUpdate();
                ResultSet keys = ps.getGeneratedKeys();
                check(keys.next(), "generated key");
                dept = keys.getInt(1);
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO emp (dept_id, name, salary) VALUES (?, ?, ?)")) {
                for (int i = 0; i < 10; i++) {
                    ps.setInt(1, dept);
                    ps.setString(2, "emp" + i);
                    ps.setBigDecimal(3, new BigDecimal("1000.10").multiply(BigDecimal.valueOf(i + 1)));
                    ps.addBatch();
                }
                int[] n = ps.executeBatch();
                check(n.length == 10, "batch counts");
            }
            c.commit();
            // run often enough that pgjdbc switches to a named server-side statement
            for (int i = 0; i < 7; i++) {
                try (PreparedStatement ps = c.prepareStatement("SELECT sum(salary) FROM emp WHERE dept_id = ?")) {
                    ps.setInt(1, dept);
                    ResultSet rs = ps.executeQuery();
                    check(rs.next() && rs.getBigDecimal(1).compareTo(new BigDecimal("55005.50")) == 0, "sum " );
                }
            }
            c.commit();
        }
    }

    static void savepoint() throws Exception {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try (Statement st = c.createStatement()) {
                st.executeUpdate("INSERT INTO dept (name) VALUES ('sales')");
                Savepoint sp = c.setSavepoint();
                try {
                    st.executeUpdate("INSERT INTO dept (name) VALUES ('research')");
                    throw new AssertionError("duplicate accepted");
                } catch (SQLException e) {
                    check("23505".equals(e.getSQLState()), "duplicate: " + e.getSQLState() + " " + e.getMessage());
                    c.rollback(sp);
                }
                c.commit();
                ResultSet rs = st.executeQuery("SELECT count(*) FROM dept");
                check(rs.next() && rs.getInt(1) == 2, "depts");
                c.commit();
            }
        }
    }

    static void copyManager() throws Exception {
        try (Connection c = ds.getConnection()) {
            CopyManager cm = c.unwrap(PGConnection.class).getCopyAPI();
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < 50; i++) sb.append("1\tcopy").append(i).append("\t").append(i).append(".75\n");
            long n = cm.copyIn("COPY emp (dept_id, name, salary) FROM STDIN", new StringReader(sb.toString()));
            check(n == 50, "copied in " + n);
            StringWriter out = new StringWriter();
            long m = cm.copyOut("COPY (SELECT name, salary FROM emp WHERE name LIKE 'copy%' ORDER BY id) TO STDOUT WITH (FORMAT csv)", out);
            check(m == 50 && out.toString().startsWith("copy0,0.75\n"), "copied out " + m);
        }
    }
}
