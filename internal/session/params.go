package session

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// ServerVersion is the PostgreSQL version shepherd presents to clients.
const ServerVersion = "15.0 (shepherd)"

// defaultParams are the values SHOW reports for parameters no SET changed,
// where they are shepherd's rather than a stock PostgreSQL's (pgSettings).
// Replicas never see SET: their own settings are fixed by their drivers
// (UTC, ISO dates, the isolation their class needs), so a client's SET is
// remembered and reported, not forwarded.
var defaultParams = map[string]string{
	"server_version":                ServerVersion,
	"server_version_num":            "150000",
	"timezone":                      "UTC",
	"transaction_isolation":         "serializable",
	"default_transaction_isolation": "serializable",
	"is_superuser":                  "off",
}

// setting is one of PostgreSQL's run-time parameters (pgSettings).
type setting struct {
	name    string // canonical spelling: SHOW's column name
	value   string // PostgreSQL's default, as SHOW prints it
	context settingContext
	kind    settingKind
	enum    string // comma-separated values of an enum
	unit    string // a number's unit ("ms", "8kB", ...), "" for none
	min     string // a number's range
	max     string
	desc    string
}

type settingContext uint8

// Where a parameter may be set (pg_settings.context).
const (
	ctxUser settingContext = iota
	ctxSuperuser
	ctxInternal
	ctxPostmaster
	ctxSighup
	ctxBackend
)

type settingKind uint8

// The types of parameters (pg_settings.vartype).
const (
	kindString settingKind = iota
	kindBool
	kindInt
	kindReal
	kindEnum
)

// hiddenSettings are parameters PostgreSQL 15 knows but leaves out of
// pg_settings and SHOW ALL (GUC_NO_SHOW_ALL).
var hiddenSettings = map[string]setting{
	"default_with_oids":       {"default_with_oids", "off", ctxUser, kindBool, "", "", "", "", "WITH OIDS is no longer supported; this can only be false."},
	"ssl_renegotiation_limit": {"ssl_renegotiation_limit", "0", ctxUser, kindInt, "", "", "0", "0", "SSL renegotiation is no longer supported; this can only be 0."},
	"seed":                    {"seed", "unavailable", ctxUser, kindReal, "", "", "-1", "1", "Sets the seed for random-number generation."},
}

func init() {
	for k, v := range hiddenSettings {
		pgSettings[k] = v
	}
}

// unrecognized is PostgreSQL's error for a parameter it does not know.
func unrecognized(name string) error {
	return pgerr.New(pgerr.UndefinedObject, "unrecognized configuration parameter %q", name)
}

// cantChangeRuntimeParam is SQLSTATE 55P02.
const cantChangeRuntimeParam = "55P02"

// param returns the value of parameter name (lower case) in the session:
// SET LOCAL's, SET's, the startup packet's, shepherd's, PostgreSQL's
// default, in that order. A name with a dot is a custom parameter, known
// once set.
func (s *Session) param(name string) (string, bool) {
	if v, ok := s.local[name]; ok {
		return v, true
	}
	opts := s.defaults
	if s.inBlock || s.implicit {
		opts = s.txOpts
	}
	switch name {
	case "transaction_isolation", "default_transaction_isolation":
		if name == "default_transaction_isolation" {
			opts = s.defaults
		}
		if opts.Isolation != "" {
			return opts.Isolation, true
		}
		return defaultParams[name], true
	case "transaction_read_only":
		return onOff(opts.ReadOnly), true
	case "default_transaction_read_only":
		return onOff(s.defaults.ReadOnly), true
	}
	if v, ok := s.params[name]; ok {
		return v, true
	}
	return s.resetValue(name)
}

// resetValue is the value RESET gives name: the startup packet's, else
// the default.
func (s *Session) resetValue(name string) (string, bool) {
	if v, ok := s.startup[name]; ok {
		return v, true
	}
	if v, ok := defaultParams[name]; ok {
		return v, true
	}
	if name == "session_authorization" {
		return s.user, true
	}
	if name == "role" {
		return "none", true
	}
	if st, ok := pgSettings[name]; ok {
		return st.value, true
	}
	return "", false
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// checkSettable refuses a SET or RESET of name as PostgreSQL would.
func checkSettable(name string) error {
	st, ok := pgSettings[name]
	if !ok {
		if strings.Contains(name, ".") || name == "session_authorization" || name == "role" {
			return nil
		}
		return unrecognized(name)
	}
	switch st.context {
	case ctxInternal:
		return pgerr.New(cantChangeRuntimeParam, "parameter %q cannot be changed", name)
	case ctxPostmaster:
		return pgerr.New(cantChangeRuntimeParam, "parameter %q cannot be changed without restarting the server", name)
	case ctxSighup:
		return pgerr.New(cantChangeRuntimeParam, "parameter %q cannot be changed now", name)
	case ctxBackend:
		return pgerr.New(cantChangeRuntimeParam, "parameter %q cannot be set after connection start", name)
	}
	return nil
}

// normalise checks value for parameter name and returns it as SHOW
// prints it (on/off for booleans, an enum's own spelling, an integer in
// the largest unit that holds it exactly).
func normalise(name, value string) (string, error) {
	switch {
	case name == "client_encoding" && !isUTF8(value):
		return "", pgerr.New(pgerr.FeatureNotSupported, "shepherd only speaks UTF8, not client_encoding %q", value)
	case name == "timezone" && !isUTC(value):
		return "", pgerr.New(pgerr.FeatureNotSupported, "shepherd sessions run in UTC; time zone %q is not supported yet", value)
	case name == "client_encoding":
		return "UTF8", nil
	case name == "datestyle":
		return dateStyle(value)
	case name == "seed":
		return "", pgerr.New(pgerr.FeatureNotSupported, "shepherd does not support SET seed: it chooses random() values itself")
	case name == "default_with_oids":
		if b, ok := parseBool(value); ok && b {
			return "", pgerr.New(pgerr.FeatureNotSupported, "tables declared WITH OIDS are not supported")
		}
	}
	if err := checkOutputSetting(name, value); err != nil {
		return "", err
	}
	return normaliseKind(name, value)
}

// normaliseKind checks and normalises value by the type of parameter
// name.
func normaliseKind(name, value string) (string, error) {
	st, ok := pgSettings[name]
	if !ok {
		return value, nil
	}
	invalid := pgerr.New(pgerr.InvalidParameterValue, "invalid value for parameter %q: %q", name, value)
	switch st.kind {
	case kindBool:
		b, ok := parseBool(value)
		if !ok {
			return "", pgerr.New(pgerr.InvalidParameterValue, "parameter %q requires a Boolean value", name)
		}
		return onOff(b), nil
	case kindEnum:
		vals := strings.Split(st.enum, ",")
		for _, v := range vals {
			if strings.EqualFold(v, strings.TrimSpace(value)) {
				return v, nil
			}
		}
		if b, ok := parseBool(value); ok && strings.Contains(","+st.enum+",", ",on,") {
			// Enums with on/off take every Boolean spelling.
			return onOff(b), nil
		}
		return "", invalid.WithHint("Available values: %s.", strings.Join(vals, ", "))
	case kindInt, kindReal:
		f, ok, badUnit := parseUnits(value, st.unit)
		if badUnit {
			return "", invalid.WithHint("%s", unitHint(st.unit))
		}
		if !ok {
			return "", invalid
		}
		lo, _ := strconv.ParseFloat(st.min, 64)
		hi, _ := strconv.ParseFloat(st.max, 64)
		unit := ""
		if st.unit != "" {
			unit = " " + st.unit
		}
		if st.kind == kindInt {
			f = math.RoundToEven(f)
			if f < lo || f > hi {
				return "", pgerr.New(pgerr.InvalidParameterValue, "%s%s is outside the valid range for parameter %q (%s .. %s)",
					strconv.FormatFloat(f, 'f', -1, 64), unit, name, st.min, st.max)
			}
			return showUnits(int64(f), st.unit), nil
		}
		if f < lo || f > hi {
			return "", pgerr.New(pgerr.InvalidParameterValue, "%s%s is outside the valid range for parameter %q (%s .. %s)",
				strconv.FormatFloat(f, 'g', 6, 64), unit, name, st.min, st.max)
		}
		return showReal(f, st.unit), nil
	}
	return value, nil
}

// parseBool reads a Boolean as PostgreSQL's parse_bool does (a unique
// prefix of true/false/yes/no, on/off, 1/0).
func parseBool(v string) (bool, bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	switch {
	case v == "":
		return false, false
	case strings.HasPrefix("true", v), strings.HasPrefix("yes", v), v == "on", v == "1":
		return true, true
	case strings.HasPrefix("false", v), strings.HasPrefix("no", v), len(v) >= 2 && strings.HasPrefix("off", v), v == "0":
		return false, true
	}
	return false, false
}

// unitSizes are the units of integer parameters, in bytes (memory) or
// microseconds (time), largest first.
var (
	memoryUnits = []struct {
		name string
		size int64
	}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}, {"B", 1}}
	timeUnits = []struct {
		name string
		size int64
	}{{"d", 86400e6}, {"h", 3600e6}, {"min", 60e6}, {"s", 1e6}, {"ms", 1e3}, {"us", 1}}
	baseUnits = map[string]int64{"B": 1, "kB": 1 << 10, "8kB": 8 << 10, "MB": 1 << 20, "us": 1, "ms": 1e3, "s": 1e6, "min": 60e6}
)

// parseUnits reads a number parameter's value, with an optional unit,
// in the parameter's base unit; badUnit when the unit is not one of its.
func parseUnits(v, unit string) (n float64, ok, badUnit bool) {
	v = strings.TrimSpace(v)
	i := 0
	for i < len(v) && strings.IndexByte("+-0123456789.eE", v[i]) >= 0 {
		if (v[i] == 'e' || v[i] == 'E') && (i+1 >= len(v) || strings.IndexByte("+-0123456789", v[i+1]) < 0) {
			break // the start of a unit ("5 ms" has none; "5e" is not a number)
		}
		i++
	}
	n, err := strconv.ParseFloat(v[:i], 64)
	if err != nil {
		return 0, false, false
	}
	suffix := strings.TrimSpace(v[i:])
	if suffix == "" {
		return n, true, false
	}
	base, known := baseUnits[unit]
	if !known {
		return 0, false, false
	}
	for _, u := range unitsOf(unit) {
		if u.name == suffix {
			return n * float64(u.size) / float64(base), true, false
		}
	}
	return 0, false, true
}

// unitsOf lists the units of a parameter whose base unit is unit.
func unitsOf(unit string) []struct {
	name string
	size int64
} {
	if strings.HasSuffix(unit, "B") {
		return memoryUnits
	}
	return timeUnits
}

// unitHint is PostgreSQL's hint for a unit a parameter does not take.
func unitHint(unit string) string {
	if strings.HasSuffix(unit, "B") {
		return `Valid units for this parameter are "B", "kB", "MB", "GB", and "TB".`
	}
	return `Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".`
}

// showUnits prints n (in unit) as SHOW does: in the largest unit that
// holds it exactly.
func showUnits(n int64, unit string) string {
	base, ok := baseUnits[unit]
	if !ok || n <= 0 {
		return strconv.FormatInt(n, 10)
	}
	total := n * base
	for _, u := range unitsOf(unit) {
		if u.size >= base && total%u.size == 0 {
			return strconv.FormatInt(total/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + unit
}

// showReal prints a real parameter as SHOW does: in the largest unit of
// which it is a whole number, else in the smallest.
func showReal(f float64, unit string) string {
	base, ok := baseUnits[unit]
	if !ok || f == 0 {
		return strconv.FormatFloat(f, 'g', 6, 64)
	}
	total := f * float64(base)
	units := unitsOf(unit)
	for _, u := range units {
		if q := total / float64(u.size); math.Abs(q-math.Round(q)) < 1e-9*math.Abs(q) {
			return strconv.FormatFloat(q, 'g', 6, 64) + u.name
		}
	}
	last := units[len(units)-1]
	return strconv.FormatFloat(total/float64(last.size), 'g', 6, 64) + last.name
}

// saveSettings remembers the settings before the first change in a
// block, so that ROLLBACK can restore them (PostgreSQL undoes SET with
// the transaction).
func (s *Session) saveSettings() {
	if !(s.inBlock || s.implicit) || s.saved != nil {
		return
	}
	s.saved = maps.Clone(s.params)
	s.savedDefaults = s.defaults
}

// endSettings ends the block's settings: SET LOCAL's values go, and on
// rollback SET's too.
func (s *Session) endSettings(commit bool) {
	if !commit && s.saved != nil {
		s.params, s.defaults = s.saved, s.savedDefaults
	}
	s.saved, s.local = nil, nil
}

// setParam sets name to value (already checked and normalised), as SET
// or, with local, SET LOCAL does.
func (s *Session) setParam(name, value string, local bool) {
	s.saveSettings()
	if local {
		if s.local == nil {
			s.local = map[string]string{}
		}
		s.local[name] = value
		return
	}
	delete(s.local, name)
	s.params[name] = value
}

func (s *Session) set(st *sqlan.Stmt) (*answer.Answer, error) {
	if _, err := s.apply(st); err != nil {
		return nil, err
	}
	return &answer.Answer{Tag: st.Verb}, nil
}

// apply carries out a SET, RESET or SET TRANSACTION and returns the value
// the parameter takes (set_config's answer).
func (s *Session) apply(st *sqlan.Stmt) (string, error) {
	block := s.inBlock || s.implicit
	// SET LOCAL outside a block is checked, then lasts no longer than the
	// statement (PostgreSQL warns).
	discard := st.SetLocal && !block
	switch {
	case st.SetTransaction:
		if st.SetName == "session characteristics" || st.SetName == "session_characteristics" {
			s.saveSettings()
			if st.TxOptions.Isolation != "" {
				s.defaults.Isolation = st.TxOptions.Isolation
			}
			s.defaults.ReadOnly = st.TxOptions.ReadOnly
			return "", nil
		}
		if !block {
			return "", nil // PostgreSQL warns: no transaction to set
		}
		if s.txn != nil {
			return "", pgerr.New(pgerr.ActiveSQLTransaction, "SET TRANSACTION ISOLATION LEVEL must be called before any query")
		}
		if st.TxOptions.Isolation != "" {
			s.txOpts.Isolation = st.TxOptions.Isolation
		}
		s.txOpts.ReadOnly = st.TxOptions.ReadOnly
		return "", nil
	case st.SetName == "all":
		s.saveSettings()
		clear(s.params)
		clear(s.local)
		s.defaults = s.startDefaults
		return "", nil
	}
	if err := checkSettable(st.SetName); err != nil {
		return "", err
	}
	if (st.SetName == "role" || st.SetName == "session_authorization") && !st.SetReset &&
		st.SetValue != s.user && !(st.SetName == "role" && st.SetValue == "none") {
		return "", pgerr.New(pgerr.FeatureNotSupported, "shepherd does not support SET ROLE or SET SESSION AUTHORIZATION to another role (%q)", st.SetValue)
	}
	switch st.SetName {
	case "transaction_isolation", "transaction_read_only", "default_transaction_isolation", "default_transaction_read_only":
		return s.setTxParam(st, discard)
	}
	if st.SetReset {
		v, _ := s.resetValue(st.SetName)
		if _, known := pgSettings[st.SetName]; !known {
			// A custom parameter RESET keeps, empty.
			v = ""
		}
		if !discard {
			s.setParam(st.SetName, v, st.SetLocal)
		}
		return v, nil
	}
	v, err := normalise(st.SetName, st.SetValue)
	if err != nil {
		return "", err
	}
	if !discard {
		s.setParam(st.SetName, v, st.SetLocal)
	}
	return v, nil
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

// showColumn is the result column of SHOW name: named by the canonical
// spelling, whatever the client wrote.
func showColumn(name string) answer.Column {
	if st, ok := pgSettings[name]; ok {
		name = st.name
	}
	return answer.Column{Name: name, Type: answer.Text, OID: answer.OIDText, Size: -1, Mod: -1}
}

func (s *Session) show(st *sqlan.Stmt) (*answer.Answer, error) {
	name := st.ShowName
	if name == "all" {
		return s.showAll(), nil
	}
	v, ok := s.param(name)
	if !ok {
		return nil, unrecognized(name)
	}
	return &answer.Answer{
		Columns:      []answer.Column{showColumn(name)},
		Rows:         [][]answer.Value{{answer.V(answer.Text, v)}},
		Tag:          "SHOW",
		RowsAffected: 1,
	}, nil
}

// showAllColumns are SHOW ALL's columns.
var showAllColumns = []answer.Column{
	{Name: "name", Type: answer.Text, OID: answer.OIDText, Size: -1, Mod: -1},
	{Name: "setting", Type: answer.Text, OID: answer.OIDText, Size: -1, Mod: -1},
	{Name: "description", Type: answer.Text, OID: answer.OIDText, Size: -1, Mod: -1},
}

// showAll answers SHOW ALL: every parameter, by name.
func (s *Session) showAll() *answer.Answer {
	a := &answer.Answer{Columns: showAllColumns, Tag: "SHOW"}
	names := make([]string, 0, len(pgSettings))
	for k := range pgSettings {
		if _, hidden := hiddenSettings[k]; !hidden {
			names = append(names, k)
		}
	}
	slices.Sort(names) // the keys are lower case: PostgreSQL's order
	for _, k := range names {
		st := pgSettings[k]
		v, _ := s.param(k)
		a.Rows = append(a.Rows, []answer.Value{answer.V(answer.Text, st.name), answer.V(answer.Text, v), answer.V(answer.Text, st.desc)})
	}
	a.RowsAffected = int64(len(a.Rows))
	return a
}

// setTxParam sets the parameters that are the transaction's options
// (SET TRANSACTION's) or their session defaults (SET SESSION
// CHARACTERISTICS'): they live in txOpts and defaults, which the replicas'
// transactions are begun with.
func (s *Session) setTxParam(st *sqlan.Stmt, discard bool) (string, error) {
	v := ""
	if !st.SetReset {
		var err error
		if v, err = normalise(st.SetName, st.SetValue); err != nil {
			return "", err
		}
	}
	if discard {
		return v, nil
	}
	switch st.SetName {
	case "default_transaction_isolation":
		s.saveSettings()
		s.defaults.Isolation = v
		if st.SetReset {
			s.defaults.Isolation = s.startDefaults.Isolation
		}
	case "default_transaction_read_only":
		s.saveSettings()
		s.defaults.ReadOnly = v == "on"
		if st.SetReset {
			s.defaults.ReadOnly = s.startDefaults.ReadOnly
		}
	default:
		if !(s.inBlock || s.implicit) || st.SetReset {
			return v, nil // outside a block there is no transaction to set
		}
		if s.txn != nil {
			return "", pgerr.New(pgerr.ActiveSQLTransaction, "SET TRANSACTION ISOLATION LEVEL must be called before any query")
		}
		if st.SetName == "transaction_isolation" {
			s.txOpts.Isolation = v
		} else {
			s.txOpts.ReadOnly = v == "on"
		}
	}
	v, _ = s.param(st.SetName)
	return v, nil
}

// reportedParams are the parameters PostgreSQL reports to the client
// whenever they change (GUC_REPORT), as the wire front reports them at
// startup.
var reportedParams = []string{
	"application_name", "client_encoding", "datestyle", "integer_datetimes", "intervalstyle", "is_superuser",
	"server_encoding", "server_version", "session_authorization", "standard_conforming_strings", "timezone",
	"default_transaction_read_only", "in_hot_standby",
}

// ChangedParameters implements pgwire.Reporter.
func (s *Session) ChangedParameters() [][2]string {
	var out [][2]string
	for _, name := range reportedParams {
		v, _ := s.param(name)
		if s.reported == nil {
			s.reported = map[string]string{}
		}
		if old, ok := s.reported[name]; ok && old == v {
			continue
		}
		s.reported[name] = v
		out = append(out, [2]string{showColumn(name).Name, v})
	}
	return out
}

// dateStyle checks a DateStyle: shepherd writes dates in ISO and reads
// ambiguous ones month first, whatever the engine, so that is the one
// style it takes (as PostgreSQL spells it: "ISO, MDY").
func dateStyle(v string) (string, error) {
	for _, tok := range strings.Split(v, ",") {
		switch strings.ToLower(strings.TrimSpace(tok)) {
		case "iso", "mdy", "us", "noneuropean", "default":
		default:
			return "", pgerr.New(pgerr.FeatureNotSupported, "shepherd only supports DateStyle ISO, MDY, not %q", v)
		}
	}
	return "ISO, MDY", nil
}

// outputSettings are the settings that change how PostgreSQL writes or
// reads values, with the one value shepherd follows: it formats answers
// itself, the same way whatever the engine, so it refuses the others
// rather than answer otherwise than it says.
var outputSettings = map[string]string{
	"intervalstyle":               "postgres",
	"bytea_output":                "hex",
	"standard_conforming_strings": "on",
}

func checkOutputSetting(name, value string) error {
	want, ok := outputSettings[name]
	if !ok {
		return nil
	}
	v, err := normaliseKind(name, value)
	if err != nil {
		return err
	}
	if v != want {
		return pgerr.New(pgerr.FeatureNotSupported, "shepherd only supports %s %s, not %q", pgSettings[name].name, want, value)
	}
	return nil
}
