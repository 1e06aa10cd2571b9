package answer

import "testing"

// TestParseTimeInput: the forms client libraries send, read as
// PostgreSQL 15 reads them (the expected texts are PostgreSQL's, checked
// against the real server by server.TestDateTimeParamsAsPostgreSQL).
func TestParseTimeInput(t *testing.T) {
	for _, c := range []struct {
		t     Type
		in    string
		want  string
		fault TimeInputFault
	}{
		{Date, "2024-02-29 +00", "2024-02-29", TimeInputOK},
		{Date, "2024-02-29 +00:00", "2024-02-29", TimeInputOK},
		{Date, "2024-02-29 12:34:56-11", "2024-02-29", TimeInputOK},
		{Date, " 2024-02-29 ", "2024-02-29", TimeInputOK},
		{Date, "epoch", "1970-01-01", TimeInputOK},
		{Date, "0044-03-15 BC", "0044-03-15 BC", TimeInputOK},
		{Date, "2024-02-30", "", TimeInputRange},
		{Date, "2024-13-01", "", TimeInputRange},
		{Date, "nope", "", TimeInputSyntax},
		{Date, "2024-02-29 +00 junk", "", TimeInputSyntax},
		{Date, "12:00", "", TimeInputSyntax},
		{Date, "today", "", TimeInputClock},
		{Timestamp, "2024-02-29 12:34:56.123 +00:00", "2024-02-29 12:34:56.123", TimeInputOK},
		{Timestamp, "2024-02-29 12:34:56.123456-05", "2024-02-29 12:34:56.123456", TimeInputOK},
		{Timestamp, "2024-02-29 12:34:56.1234565", "2024-02-29 12:34:56.123456", TimeInputOK},
		{Timestamp, "2024-02-29 23:59:59.9999999", "2024-03-01 00:00:00", TimeInputOK},
		{Timestamp, "2024-02-29 12:34", "2024-02-29 12:34:00", TimeInputOK},
		{Timestamp, "infinity", "infinity", TimeInputOK},
		{Timestamp, "2024-02-29 25:00:00", "", TimeInputRange},
		{Timestamp, "2024-02-29 12:34:56+25", "", TimeInputZone},
		{Timestamp, "2024-02-29 12:3x", "", TimeInputSyntax},
		{Timestamp, "NOW", "", TimeInputClock},
		{TimestampTZ, "2024-02-29 12:34:56.123456-05", "2024-02-29 17:34:56.123456+00", TimeInputOK},
		{TimestampTZ, "2024-02-29T01:02:03.5+05:30", "2024-02-28 19:32:03.5+00", TimeInputOK},
		{TimestampTZ, "2024-02-29 +00", "2024-02-29 00:00:00+00", TimeInputOK},
		{TimestampTZ, "2024-02-29 12:34:56 +1", "2024-02-29 11:34:56+00", TimeInputOK},
		{TimestampTZ, "epoch", "1970-01-01 00:00:00+00", TimeInputOK},
		{Time, "12:34:56+00", "12:34:56", TimeInputOK},
		{Time, "12:34:56.1234567", "12:34:56.123457", TimeInputOK},
		{Time, "2024-02-29 12:34:56", "12:34:56", TimeInputOK},
		{Time, "23:59:59.9999999", "24:00:00", TimeInputOK},
		{Time, "allballs", "00:00:00", TimeInputOK},
		{Time, "12:61", "", TimeInputRange},
		{Time, "noon", "", TimeInputSyntax},
	} {
		got, fault := ParseTimeInput(c.t, c.in)
		if got != c.want || fault != c.fault {
			t.Errorf("%v %q: got %q, fault %d; want %q, fault %d", c.t, c.in, got, fault, c.want, c.fault)
		}
	}
}

// FuzzParseTimeInput: no input panics, and what is accepted is printed in
// a form that reads back as itself.
func FuzzParseTimeInput(f *testing.F) {
	for _, s := range []string{"2024-02-29 +00", "2024-02-29 23:59:59.9999999-05", "12:34:56.1234567", "epoch", "0044-03-15 BC", "24:00:00", "2024-02-29 12:00+16"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, typ := range []Type{Date, Time, Timestamp, TimestampTZ} {
			v, fault := ParseTimeInput(typ, s)
			if fault != TimeInputOK {
				continue
			}
			if again, fault := ParseTimeInput(typ, v); fault != TimeInputOK || again != v {
				t.Errorf("%v %q: printed %q, which reads back as %q (fault %d)", typ, s, v, again, fault)
			}
		}
	})
}
