package bench

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strings"
)

// Machine describes where a benchmark ran.
type Machine struct {
	Hostname   string            `json:"hostname"`
	OS         string            `json:"os"`
	Arch       string            `json:"arch"`
	CPUs       int               `json:"cpus"`
	GOMAXPROCS int               `json:"gomaxprocs"`
	CPUModel   string            `json:"cpu_model,omitempty"`
	MemoryMiB  int64             `json:"memory_mib,omitempty"`
	Go         string            `json:"go"`
	Engines    map[string]string `json:"engines,omitempty"`
}

// ThisMachine describes this machine, with the versions of the engines
// e reaches (e may be nil).
func ThisMachine(ctx context.Context, e *Engines) Machine {
	m := Machine{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0), Go: runtime.Version()}
	m.Hostname, _ = os.Hostname()
	m.CPUModel = procField("/proc/cpuinfo", "model name")
	if kb := procField("/proc/meminfo", "MemTotal"); kb != "" {
		var n int64
		for _, r := range strings.TrimSuffix(kb, " kB") {
			if r < '0' || r > '9' {
				break
			}
			n = n*10 + int64(r-'0')
		}
		m.MemoryMiB = n / 1024
	}
	if e != nil {
		m.Engines = e.Versions(ctx)
	}
	return m
}

// procField returns the value of the first "key: value" line of a /proc
// file, or "".
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
