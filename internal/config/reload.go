package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Live lists the keys a reload (SIGHUP) changes while shepherd runs; a
// change to any other key needs a restart. replicas[].fault is live
// except fault.isolation, which is the engine's own; the server also
// refuses faults for a replica that injected none at start (its engine
// is wrapped to inject them only then).
var Live = []string{"users", "repair", "log.level", "log.refused", "cursor_memory_mb", "memory_limit_mb", "max_connections", "reserved_connections", "max_transactions", "client_write_timeout", "replicas[].fault"}

// RestartNeeded returns the first key, by its path in the file
// ("replicas[1].dsn", "mode"), whose change between old and new a
// reload cannot apply; "" when every change is live (see Live). Keys
// added to Config later need a restart until they are made live here: a
// reload that cannot apply a change refuses it rather than ignore it.
func RestartNeeded(old, new *Config) string {
	a, b := restartPart(old), restartPart(new)
	return diff(reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem(), "")
}

// restartPart returns a copy of c with the live keys cleared.
func restartPart(c *Config) *Config {
	x := *c
	x.Users = nil
	x.Repair = Repair{}
	x.Log.Level, x.Log.Refused = "", false
	x.CursorMemoryMB = 0
	x.MemoryLimitMB = 0
	x.MaxConnections, x.ReservedConnections = 0, nil
	x.MaxTransactions = 0
	x.ClientWriteTimeout = ""
	x.Replicas = slices.Clone(c.Replicas)
	for i := range x.Replicas {
		x.Replicas[i].Fault = Fault{Isolation: x.Replicas[i].Fault.Isolation}
	}
	return &x
}

// diff returns the path of the first difference between a and b, named
// by their toml keys.
func diff(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Struct:
		t := a.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name == "" {
				name = f.Name
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			if d := diff(a.Field(i), b.Field(i), p); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		if a.Len() != b.Len() {
			return path
		}
		for i := range a.Len() {
			if d := diff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path
			}
			return ""
		}
		return diff(a.Elem(), b.Elem(), path)
	}
	if !reflect.DeepEqual(a.Interface(), b.Interface()) {
		return path
	}
	return ""
}
