package wal

// FormFor returns the statement as the replicas of dialect tag d ran it,
// and false when the record holds no such form (a record of log format 1,
// which kept the client's text only, or a dialect added since). Replay
// sends exactly this form and never analyses SQL again: the client's text
// resolved against the schema of the replay's day (a table dropped and
// created again, columns renamed since) could write something else than
// the replicas wrote. The simulator's replay (internal/coord/sim) goes
// through it too.
func (st Statement) FormFor(d uint8) (Form, bool) {
	for _, f := range st.Forms {
		if f.Dialect == d {
			return f, true
		}
	}
	return Form{}, false
}
