// Hibernate ORM 6 on pgjdbc, default PostgreSQL dialect detection:
// hbm2ddl update creates the schema (reading the catalogs first), an
// IDENTITY id and a SEQUENCE id (the JPA default generator), a
// many-to-one, persist and JPQL queries (a LIKE, which Hibernate sends
// with ESCAPE ''), a rolled back transaction, and a second SessionFactory
// whose update finds nothing to change.
import jakarta.persistence.*;
import java.math.BigDecimal;
import java.net.URI;
import java.util.*;
import org.hibernate.SessionFactory;
import org.hibernate.cfg.Configuration;

public class HibernateApp {
    @Entity(name = "Publisher")
    @Table(name = "publisher")
    public static class Publisher {
        @Id @GeneratedValue(strategy = GenerationType.IDENTITY) public Long id;
        @Column(nullable = false, unique = true, length = 80) public String name;
        public Publisher() {}
        public Publisher(String name) { this.name = name; }
    }

    @Entity(name = "Book")
    @Table(name = "book", uniqueConstraints = @UniqueConstraint(columnNames = {"publisher_id", "isbn"}))
    public static class Book {
        @Id @GeneratedValue(strategy = GenerationType.SEQUENCE) public Long id;
        @Column(nullable = false, length = 20) public String isbn;
        @Column(nullable = false, length = 200) public String title;
        @Column(precision = 10, scale = 2, nullable = false) public BigDecimal price;
        @ManyToOne(optional = false, fetch = FetchType.EAGER) @JoinColumn(name = "publisher_id") public Publisher publisher;
        public Book() {}
        public Book(Publisher p, String isbn, String title, String price) {
            publisher = p; this.isbn = isbn; this.title = title; this.price = new BigDecimal(price);
        }
    }

    interface Step { void run() throws Exception; }

    static SessionFactory sf;

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

    static SessionFactory build() {
        URI u = URI.create(System.getenv("DATABASE_URL"));
        String[] user = u.getUserInfo().split(":", 2);
        Configuration cfg = new Configuration()
                .addAnnotatedClass(Publisher.class)
                .addAnnotatedClass(Book.class)
                .setProperty("hibernate.connection.url", "jdbc:postgresql://" + u.getHost() + ":" + u.getPort() + u.getPath())
                .setProperty("hibernate.connection.username", user[0])
                .setProperty("hibernate.hbm2ddl.auto", "update")
                .setProperty("hibernate.connection.pool_size", "2");
        if (user.length > 1) cfg.setProperty("hibernate.connection.password", user[1]);
        // The entities live in the java source launcher's class loader.
        Thread.currentThread().setContextClassLoader(HibernateApp.class.getClassLoader());
        return cfg.buildSessionFactory();
    }

    // firstWarning is the first database error Hibernate logged as a
    // warning: when it cannot read the database's metadata it says why
    // only there.
    static String firstWarning;

    public static void main(String[] args) {
        System.setProperty("org.jboss.logging.provider", "jdk");
        java.util.logging.Logger root = java.util.logging.Logger.getLogger("");
        root.addHandler(new java.util.logging.Handler() {
            @Override public void publish(java.util.logging.LogRecord r) {
                if (firstWarning != null || r.getLevel().intValue() < java.util.logging.Level.WARNING.intValue()) {
                    return;
                }
                String m = new java.util.logging.SimpleFormatter().formatMessage(r);
                if (m.contains("SQLException")) {
                    firstWarning = m.replaceAll("\\s+", " ");
                } else if (r.getThrown() != null) {
                    firstWarning = firstError(r.getThrown());
                }
            }
            @Override public void flush() {}
            @Override public void close() {}
        });
        LinkedHashMap<String, Step> steps = new LinkedHashMap<>();
        steps.put("hbm2ddl_update", () -> { sf = build(); });
        steps.put("persist", HibernateApp::persist);
        steps.put("jpql", HibernateApp::jpql);
        steps.put("rollback", HibernateApp::rollback);
        steps.put("update_again", () -> { sf.close(); sf = build(); jpql(); });
        int code = 0;
        for (Map.Entry<String, Step> s : steps.entrySet()) {
            try {
                s.getValue().run();
                System.out.println("ok " + s.getKey());
            } catch (Throwable e) {
                e.printStackTrace(System.out);
                System.out.println("FAIL " + s.getKey() + ": "
                        + (firstWarning != null ? "logged " + firstWarning + "; then " : "") + firstError(e));
                code = 1;
                break;
            }
        }
        if (sf != null) sf.close();
        System.exit(code);
    }

    static void persist() {
        sf.inTransaction(s -> {
            Publisher p = new Publisher("Penguin");
            s.persist(p);
            Publisher q = new Publisher("Faber");
            s.persist(q);
            for (int i = 0; i < 5; i++) s.persist(new Book(p, "978-0-" + i, "Classic " + i, i + "9.99"));
            s.persist(new Book(q, "978-1-0", "Poems", "15.00"));
        });
    }

    static void jpql() {
        sf.inSession(s -> {
            List<Book> books = s.createQuery("from Book b where b.title like :t order by b.isbn", Book.class)
                    .setParameter("t", "Classic%").getResultList();
            check(books.size() == 5 && books.get(0).publisher.name.equals("Penguin"), "classics " + books.size());
            BigDecimal sum = s.createQuery("select sum(b.price) from Book b where b.publisher.name = :n", BigDecimal.class)
                    .setParameter("n", "Penguin").getSingleResult();
            check(sum.compareTo(new BigDecimal("149.95")) == 0, "sum " + sum);
            Long n = s.createQuery("select count(b) from Book b", Long.class).getSingleResult();
            check(n == 6, "books " + n);
        });
    }

    static void rollback() {
        try {
            sf.inTransaction(s -> {
                Publisher p = s.createQuery("from Publisher where name = 'Faber'", Publisher.class).getSingleResult();
                s.persist(new Book(p, "978-1-1", "Plays", "12.00"));
                s.flush();
                throw new IllegalStateException("roll back");
            });
        } catch (IllegalStateException expected) {
        }
    }
}
