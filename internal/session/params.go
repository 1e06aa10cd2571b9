package session

import (
	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// ServerVersion is the PostgreSQL version shepherd presents to clients.
const ServerVersion = "15.0 (shepherd)"

// defaultParams are the values SHOW reports for parameters no SET changed.
// Replicas never see SET: their own settings are fixed by their drivers
// (UTC, ISO dates, the isolation their class needs), so a client's SET is
// remembered and reported, not forwarded.
var defaultParams = map[string]string{
	"server_version":                "15.0",
	"server_version_num":            "150000",
	"server_encoding":               "UTF8",
	"client_encoding":               "UTF8",
	"datestyle":                     "ISO, MDY",
	"timezone":                      "UTC",
	"integer_datetimes":             "on",
	"standard_conforming_strings":   "on",
	"transaction_isolation":         "serializable",
	"default_transaction_isolation": "serializable",
	"transaction_read_only":         "off",
	"default_transaction_read_only": "off",
	"application_name":              "",
	"extra_float_digits":            "1",
	"search_path":                   `"$user", public`,
	"max_identifier_length":         "63",
	"is_superuser":                  "off",
	"statement_timeout":             "0",
	"lock_timeout":                  "0",
	"intervalstyle":                 "postgres",
}

// fixedParams cannot be changed, because replicas could not follow.
var fixedParams = map[string]bool{
	"server_version": true, "server_version_num": true, "server_encoding": true,
	"integer_datetimes": true, "max_identifier_length": true, "is_superuser": true,
}

func (s *Session) set(st *sqlan.Stmt) (*answer.Answer, error) {
	tag := &answer.Answer{Tag: st.Verb}
	switch {
	case st.SetTransaction:
		if st.SetName == "session_characteristics" || s.txn == nil && !s.inBlock {
			if st.SetName == "session_characteristics" {
				s.defaults = st.TxOptions
			}
			return tag, nil
		}
		if s.txn != nil {
			return nil, pgerr.New(pgerr.ActiveSQLTransaction, "SET TRANSACTION ISOLATION LEVEL must be called before any query")
		}
		if st.TxOptions.Isolation != "" {
			s.txOpts.Isolation = st.TxOptions.Isolation
		}
		s.txOpts.ReadOnly = st.TxOptions.ReadOnly
		return tag, nil
	case st.SetName == "all":
		clear(s.params)
		return tag, nil
	case fixedParams[st.SetName]:
		return nil, pgerr.New(pgerr.InvalidParameterValue, "parameter %q cannot be changed", st.SetName)
	case st.SetName == "client_encoding" && !st.SetReset && !isUTF8(st.SetValue):
		return nil, pgerr.New(pgerr.FeatureNotSupported, "shepherd only speaks UTF8, not client_encoding %q", st.SetValue)
	case st.SetName == "timezone" && !st.SetReset && !isUTC(st.SetValue):
		return nil, pgerr.New(pgerr.FeatureNotSupported, "shepherd sessions run in UTC; time zone %q is not supported yet", st.SetValue)
	case st.SetReset:
		delete(s.params, st.SetName)
		return tag, nil
	}
	s.params[st.SetName] = st.SetValue
	return tag, nil
}

func isUTF8(v string) bool {
	switch v {
	case "UTF8", "utf8", "UTF-8", "utf-8", "unicode", "UNICODE":
		return true
	}
	return false
}

func isUTC(v string) bool {
	switch v {
	case "UTC", "utc", "Etc/UTC", "GMT", "Z", "0", "+00", "+00:00", "UTC0":
		return true
	}
	return false
}

// showNames are the parameters whose canonical spelling is not lower
// case: SHOW names its column by the canonical spelling, whatever the
// client wrote.
var showNames = map[string]string{
	"datestyle":     "DateStyle",
	"intervalstyle": "IntervalStyle",
	"timezone":      "TimeZone",
}

// showColumn is the result column of SHOW name.
func showColumn(name string) answer.Column {
	if canon, ok := showNames[name]; ok {
		name = canon
	}
	return answer.Column{Name: name, Type: answer.Text, OID: answer.OIDText, Size: -1, Mod: -1}
}

func (s *Session) show(st *sqlan.Stmt) (*answer.Answer, error) {
	name := st.ShowName
	v, ok := s.params[name]
	if !ok {
		v, ok = defaultParams[name]
	}
	if name == "transaction_isolation" && s.txOpts.Isolation != "" && s.inBlock {
		v, ok = s.txOpts.Isolation, true
	}
	if !ok {
		return nil, pgerr.New(pgerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	return &answer.Answer{
		Columns:      []answer.Column{showColumn(name)},
		Rows:         [][]answer.Value{{answer.V(answer.Text, v)}},
		Tag:          "SHOW",
		RowsAffected: 1,
	}, nil
}
