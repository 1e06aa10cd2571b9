package pgwire

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Startup packet codes (the int32 after the length).
const (
	codeCancelRequest = 80877102 // 1234.5678
	codeSSLRequest    = 80877103 // 1234.5679
	codeGSSEncRequest = 80877104 // 1234.5680
	protocolMajor     = 3
)

// Startup packet size limits, PostgreSQL's own.
const (
	minStartupPacketBytes = 8
	maxStartupPacketBytes = 10_000
	// maxEncryptionRequests bounds the SSLRequest/GSSENCRequest round trips
	// before the StartupMessage.
	maxEncryptionRequests = 2
)

// errCancelRequest ends a connection that carried a CancelRequest.
var errCancelRequest = errors.New("pgwire: cancel request served")

// errTLSHandshake ends a connection whose TLS handshake failed: nothing can
// be said to the client, but the failure is logged.
var errTLSHandshake = errors.New("pgwire: TLS handshake failed")

// startup reads the startup packets and authenticates the client. It
// answers an SSLRequest with 'S' and goes on inside TLS when the Server has
// a TLS configuration (else 'N'), a GSSENCRequest with 'N', serves a
// CancelRequest (returning errCancelRequest) and negotiates the protocol
// down to 3.0. A StartupMessage outside TLS is refused when RequireTLS, one
// Admit refuses gets Admit's error, and
// one past MaxConnections gets 53300, as does one of a user Reserved does
// not accept in the reserved slots. Every error it returns other than the
// client leaving is FATAL.
func (c *conn) startup(ctx context.Context) (StartupInfo, error) {
	if err := c.nc.SetDeadline(time.Now().Add(c.srv.authTimeout())); err != nil {
		return StartupInfo{}, errors.Join(errClientGone, err)
	}
	msg, err := c.readStartupMessage(ctx)
	if err != nil {
		return StartupInfo{}, err
	}
	info := StartupInfo{
		User:       msg.Parameters["user"],
		Database:   msg.Parameters["database"],
		Params:     msg.Parameters,
		RemoteAddr: c.nc.RemoteAddr().String(),
	}
	if info.User == "" {
		return info, pgerr.New(pgerr.InvalidAuthorization, "no PostgreSQL user name specified in startup packet").Fatal()
	}
	if info.Database == "" {
		info.Database = info.User
	}
	if c.srv.RequireTLS && !c.tls {
		return info, c.plaintextRefused(info)
	}
	if c.srv.Admit != nil {
		if err := c.srv.Admit(); err != nil {
			return info, err
		}
	}
	if c.releaseSlot, err = c.srv.takeSlot(); err != nil {
		return info, err
	}
	if err := c.authenticate(ctx, info.User); err != nil {
		return info, err
	}
	if err := c.srv.checkReserve(info.User); err != nil {
		return info, err
	}
	if err := c.nc.SetDeadline(time.Time{}); err != nil {
		return info, errors.Join(errClientGone, err)
	}
	return info, nil
}

// plaintextRefused is the error of a StartupMessage outside TLS when TLS is
// required: PostgreSQL's, word for word, when its pg_hba.conf has hostssl
// lines only (clients and their users know it), with a hint saying what
// shepherd wants instead.
func (c *conn) plaintextRefused(info StartupInfo) error {
	host := info.RemoteAddr
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return pgerr.New(pgerr.InvalidAuthorization, "no pg_hba.conf entry for host %q, user %q, database %q, no encryption",
		host, info.User, info.Database).
		WithHint("this server accepts TLS connections only: connect with sslmode=require or stronger").Fatal()
}

// readStartupMessage reads startup packets until the StartupMessage. As in
// PostgreSQL, each kind of encryption request is answered once: a second
// SSLRequest, or a GSSENCRequest inside TLS, is read as a StartupMessage of
// an unsupported protocol version.
func (c *conn) readStartupMessage(ctx context.Context) (*pgproto3.StartupMessage, error) {
	var sslDone, gssDone bool
	for range maxEncryptionRequests + 1 {
		body, err := c.readStartupPacket()
		if err != nil {
			return nil, err
		}
		code := binary.BigEndian.Uint32(body)
		switch {
		case code == codeSSLRequest && !sslDone:
			sslDone = true
			if err := c.negotiateTLS(ctx); err != nil {
				return nil, err
			}
			gssDone = gssDone || c.tls
			continue
		case code == codeGSSEncRequest && !gssDone:
			// GSSAPI encryption is not offered: the client goes on in
			// the clear, asks for TLS, or gives up, as it chooses.
			gssDone = true
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return nil, errors.Join(errClientGone, err)
			}
			continue
		case code == codeCancelRequest:
			return nil, c.serveCancel(body)
		}
		return c.decodeStartupMessage(body)
	}
	return nil, pgerr.New(pgerr.ProtocolViolation, "too many encryption requests").Fatal()
}

// negotiateTLS answers an SSLRequest: 'N' without a TLS configuration (the
// client goes on in the clear or gives up), else 'S' and the TLS handshake,
// after which the connection speaks through TLS. Nothing the client sent
// after the SSLRequest has been read (startup packets are read straight
// from the socket), so no plaintext can pass for encrypted data.
func (c *conn) negotiateTLS(ctx context.Context) error {
	if c.srv.TLS == nil {
		if _, err := c.nc.Write([]byte{'N'}); err != nil {
			return errors.Join(errClientGone, err)
		}
		return nil
	}
	if _, err := c.nc.Write([]byte{'S'}); err != nil {
		return errors.Join(errClientGone, err)
	}
	tc := tls.Server(c.nc, c.srv.TLS)
	if err := tc.HandshakeContext(ctx); err != nil {
		return fmt.Errorf("%w: %w", errTLSHandshake, err)
	}
	c.useTransport(tc)
	c.tls = true
	return nil
}

// readStartupPacket reads one length-prefixed startup packet and returns
// its body, which starts with the int32 code. Startup packets are read
// straight from the socket: nothing is buffered beyond them.
func (c *conn) readStartupPacket() ([]byte, error) {
	var header [4]byte
	if _, err := io.ReadFull(c.nc, header[:]); err != nil {
		return nil, errors.Join(errClientGone, err)
	}
	size := int(int32(binary.BigEndian.Uint32(header[:])))
	if size < minStartupPacketBytes || size > maxStartupPacketBytes {
		return nil, pgerr.New(pgerr.ProtocolViolation, "invalid length of startup packet: %d", size).Fatal()
	}
	body := make([]byte, size-4)
	if _, err := io.ReadFull(c.nc, body); err != nil {
		return nil, pgerr.New(pgerr.ProtocolViolation, "incomplete startup packet").Fatal()
	}
	return body, nil
}

// decodeStartupMessage decodes a StartupMessage of protocol 3.x. A minor
// version above 0, or protocol options (_pq_.*), are answered with
// NegotiateProtocolVersion, as PostgreSQL does, and the connection goes on
// in 3.0.
func (c *conn) decodeStartupMessage(body []byte) (*pgproto3.StartupMessage, error) {
	version := binary.BigEndian.Uint32(body)
	major, minor := version>>16, version&0xffff
	if major != protocolMajor {
		return nil, pgerr.New(pgerr.FeatureNotSupported,
			"unsupported frontend protocol %d.%d: server supports 3.0 to 3.0", major, minor).Fatal()
	}
	// pgproto3 decodes only the minor versions it knows; the parameters are
	// laid out alike in every 3.x, so decode a copy stamped 3.0.
	stamped := slices.Clone(body)
	binary.BigEndian.PutUint32(stamped, pgproto3.ProtocolVersion30)
	msg := &pgproto3.StartupMessage{}
	if err := msg.Decode(stamped); err != nil {
		return nil, pgerr.New(pgerr.ProtocolViolation, "invalid startup packet layout: %v", err).Fatal()
	}
	var options []string
	for _, k := range slices.Sorted(maps.Keys(msg.Parameters)) {
		if strings.HasPrefix(k, "_pq_.") {
			options = append(options, k)
			delete(msg.Parameters, k)
		}
	}
	if minor > 0 || len(options) > 0 {
		c.send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: options})
	}
	return msg, nil
}

// serveCancel handles a CancelRequest packet: it cancels the session the
// key names, if any, and says nothing back (the client cannot tell whether
// the key was right).
func (c *conn) serveCancel(body []byte) error {
	var req pgproto3.CancelRequest
	if err := req.Decode(body); err != nil {
		return errors.Join(errCancelRequest, err)
	}
	if c.srv.cancel(req.ProcessID, req.SecretKey) {
		c.log.Debug("pgwire: cancel request served", "pid", req.ProcessID)
	}
	return errCancelRequest
}

// sendParameterStatuses tells the client the settings it relies on.
func (c *conn) sendParameterStatuses(info StartupInfo) {
	statuses := [][2]string{
		{"server_version", c.srv.serverVersion()},
		{"server_encoding", "UTF8"},
		{"client_encoding", "UTF8"},
		{"DateStyle", "ISO, MDY"},
		{"IntervalStyle", "postgres"},
		{"integer_datetimes", "on"},
		{"standard_conforming_strings", "on"},
		{"TimeZone", "UTC"},
		{"application_name", info.Params["application_name"]},
		{"is_superuser", "off"},
		{"session_authorization", info.User},
		{"default_transaction_read_only", "off"},
		{"in_hot_standby", "off"},
	}
	for _, s := range statuses {
		c.send(&pgproto3.ParameterStatus{Name: s[0], Value: s[1]})
	}
}
