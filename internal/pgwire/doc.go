// Package pgwire is shepherd's PostgreSQL front: it speaks version 3.0 of
// the PostgreSQL frontend/backend protocol to clients and hands every
// statement to a Session (backend.go), which replicates it. The package
// knows nothing about replicas or SQL; it only frames, authenticates,
// converts values between text and binary, and keeps the per-connection
// protocol state (prepared statements, portals, error recovery).
//
// # Connection lifecycle
//
// Server.Serve accepts connections and runs ServeConn for each in its own
// goroutine. A connection first sends startup packets, read straight from
// the socket under Server.AuthTimeout:
//
//   - SSLRequest is answered 'S' when Server.TLS is set: the TLS handshake
//     follows and the connection goes on inside TLS; without it, 'N' and
//     the client goes on in the clear. GSSENCRequest is answered 'N'.
//     Each is answered once, as PostgreSQL does;
//   - with Server.RequireTLS, a StartupMessage outside TLS is refused
//     with FATAL 28000;
//   - past Server.MaxConnections connections, a StartupMessage is refused
//     with FATAL 53300 "sorry, too many clients already"; in the last
//     ReservedConnections, a user Server.Reserved does not accept is
//     refused (53300) once authenticated;
//   - CancelRequest is served (see below) and the connection closed;
//   - StartupMessage must speak protocol 3.x: any other major version is
//     refused with FATAL 0A000; a minor version above 0, or _pq_ protocol
//     options, are answered with NegotiateProtocolVersion and the
//     connection continues in 3.0, as PostgreSQL does.
//
// Authentication follows Server.Users: a user with an empty password is
// trusted, any other user runs SCRAM-SHA-256, and an unknown user runs a
// mock SCRAM exchange that fails exactly as a wrong password does (FATAL
// 28P01), so names cannot be probed. With no users configured, any name is
// trusted, but only over loopback, Unix sockets or in-process pipes.
//
// The Handler then opens the Session (its error is sent as FATAL). The
// client is told the parameters it relies on (server_version,
// client_encoding UTF8, DateStyle ISO, integer_datetimes,
// standard_conforming_strings, TimeZone UTC, ...), a random BackendKeyData
// and ReadyForQuery. From then on, whatever ends the connection (Terminate,
// the client vanishing, a FATAL error, server shutdown), Session.Close runs
// exactly once, after every statement still prepared has been released with
// CloseStatement. Server shutdown (ctx done) closes every socket, which
// unblocks the connection goroutines; Serve waits for all of them.
//
// # The message loop
//
// One goroutine per connection reads a message, runs it to the end and
// reads the next. Running a statement in the reading goroutine is safe
// because the one message that must interrupt a running statement,
// CancelRequest, arrives on a separate connection. Output is buffered and
// reaches the client at each ReadyForQuery, at Flush, at an error in the
// extended protocol (as PostgreSQL sends it: a client waiting after Flush
// must hear it before it sends Sync), and whenever the buffer fills, so a
// large answer streams out as it is encoded.
//
// A Query message runs through Session.Query; each statement's answer
// becomes RowDescription, DataRows (text format) and CommandComplete; an
// empty string gives EmptyQueryResponse; the first error stops the query.
// ReadyForQuery always follows, with the Session's transaction status.
//
// The extended protocol keeps prepared statements and portals by name (""
// is the unnamed one, silently replaced). Parse calls Session.Prepare;
// Describe and Bind call Session.Describe once per statement and remember
// the parameter and column types, which decide how Bind parameters are
// decoded and how result rows are encoded. Execute runs the portal's
// statement once, keeps the whole answer in the portal and hands out at
// most the requested number of rows per Execute, with PortalSuspended
// between batches. Sync ends the batch with ReadyForQuery; the unnamed
// portal goes away there, and every portal once no transaction is open.
//
// # Values
//
// Sessions speak PostgreSQL text form (package answer); bytea is carried
// as raw bytes. Text-format results are that text (bytea as \x hex);
// binary-format results and binary parameters are converted with pgx's
// pgtype codecs, using pgtype's wrapper types so that infinities and NaN
// survive. Character types and json need no conversion; jsonb only a
// version byte. A value that does not parse as its column's type is error
// 22P02; a malformed binary parameter is 08P01.
//
// # COPY
//
// The front hands the Session a Copier in the context of Query and Execute
// (CopierFrom). A COPY FROM STDIN statement calls CopyIn: CopyInResponse,
// then the client's CopyData up to CopyDone (Flush and Sync ignored, as
// PostgreSQL ignores them there), all held in memory up to the Session's
// limit (54000 beyond it), then parsed as PostgreSQL parses text, CSV and
// binary COPY data, with its errors and CONTEXT; CopyFail is 57014. A
// COPY TO STDOUT calls CopyOut with the whole answer: CopyOutResponse,
// one CopyData per row encoded as PostgreSQL's COPY encodes it, CopyDone;
// the Session's answer then gives CommandComplete "COPY n". After an
// error the client's remaining COPY messages are ignored, as PostgreSQL
// ignores them.
//
// # Error recovery
//
// An error in an extended-protocol message is reported with ErrorResponse
// and every message after it is ignored until Sync, as in PostgreSQL: a
// client that pipelined Parse/Bind/Execute/Sync sees one error and one
// ReadyForQuery. Errors carry the *pgerr.Error's severity, SQLSTATE,
// message, detail and hint. A FATAL error ends the connection after being
// sent. Malformed input (unknown message type, bad length, a body over
// Server.MaxMessageBytes, a message cut short) is FATAL 08P01: the framing
// can no longer be trusted. A Query read whole whose string holds a NUL
// or lacks its terminator is ERROR 08P01 ("invalid message format",
// "invalid string in message") and the session goes on, as in
// PostgreSQL. A connection's failure never touches another.
//
// A write to the client that makes no progress for Server.WriteTimeout
// (five minutes unless set; PostgreSQL has no such bound) ends the
// connection: a client that never reads its answers holds its session,
// its transaction's locks and one answer in memory only that long.
//
// # Cancellation
//
// BackendKeyData gives every session a random process id and secret. A
// CancelRequest naming both calls Session.Cancel, concurrently with the
// session's own goroutine; the Session makes the running statement fail
// (57014) and the connection carries on. A wrong key is ignored silently.
//
// # Refused or unsupported
//
// Encryption (SSL, GSS) is declined, not refused. Fast-path FunctionCall
// is answered 0A000. There is no replication protocol, and no password
// methods other than SCRAM-SHA-256 (no channel binding, since there is no
// TLS).
//
// # Notifications
//
// A Session that is a Notifier (LISTEN) has its notifications sent as
// NotificationResponse messages when no transaction is open, as
// PostgreSQL sends them: just before a ReadyForQuery with status 'I', and
// while the connection waits for the next command after one, from a
// goroutine of the connection's that may write only then (notify.go).
package pgwire
