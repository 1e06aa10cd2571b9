package slt

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Summary adds up results.
type Summary struct {
	Records  int // records run
	Rejected int // PostgreSQL fails them: not counted
	Counts   map[Outcome]int
	// Refusals counts Refused records by shepherd's message.
	Refusals map[string]int
	// Errors counts Failed records by SQLSTATE and message.
	Errors map[string]int
	// Findings are every result but Same, Refused and Rejected.
	Findings []Result
}

// Add counts the results of one file.
func (s *Summary) Add(results []Result) {
	if s.Counts == nil {
		s.Counts, s.Refusals, s.Errors = map[Outcome]int{}, map[string]int{}, map[string]int{}
	}
	for _, r := range results {
		s.Records++
		s.Counts[r.Outcome]++
		switch r.Outcome {
		case Rejected:
			s.Rejected++
		case Same:
		case Refused:
			s.Refusals[reason(r.Message)]++
		case Failed:
			s.Errors[reason(r.Code+" "+r.Message+" "+r.Detail)]++
			s.Findings = append(s.Findings, r)
		default:
			s.Findings = append(s.Findings, r)
		}
	}
}

// Compared is the number of records PostgreSQL accepts: the denominator.
func (s *Summary) Compared() int { return s.Records - s.Rejected }

// SamePercent is the share of compared records answered as PostgreSQL
// answers them.
func (s *Summary) SamePercent() float64 {
	if s.Compared() == 0 {
		return 100
	}
	return 100 * float64(s.Counts[Same]) / float64(s.Compared())
}

// reason shortens a message to group by.
func reason(msg string) string {
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 160 {
		msg = msg[:160] + "..."
	}
	return msg
}

// Write prints the figures, the refusals and errors by reason, and up to
// maxFindings findings with their SQL.
func (s *Summary) Write(w io.Writer, maxFindings int) {
	fmt.Fprintf(w, "sqllogictest: %d records run, %d rejected by PostgreSQL (not counted), %d compared\n",
		s.Records, s.Rejected, s.Compared())
	fmt.Fprintf(w, "  same as PostgreSQL: %d (%.3f %%)\n", s.Counts[Same], s.SamePercent())
	for _, o := range []Outcome{Refused, Differs, Failed, Mismatch, ReplicaOut} {
		fmt.Fprintf(w, "  %-12s %d\n", o+":", s.Counts[o])
	}
	byCount := func(m map[string]int, title string) {
		if len(m) == 0 {
			return
		}
		fmt.Fprintf(w, "%s:\n", title)
		keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
			return cmp.Or(cmp.Compare(m[b], m[a]), strings.Compare(a, b))
		})
		for _, k := range keys {
			fmt.Fprintf(w, "  %6d  %s\n", m[k], k)
		}
	}
	byCount(s.Refusals, "refusals (0A000) by reason")
	byCount(s.Errors, "other errors by reason")
	for i, f := range s.Findings {
		if i == maxFindings {
			fmt.Fprintf(w, "... and %d more findings\n", len(s.Findings)-i)
			break
		}
		fmt.Fprintf(w, "%s %s: %s\n    %s\n", f.Pos(), f.Outcome, firstOf(f.Detail, f.Code+" "+f.Message), oneLine(f.Record.SQL))
	}
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
