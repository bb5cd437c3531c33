package benchmark

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// FaultsFolder is the folder of --servers-dir that holds the servers
// bench may kill: a file per driver, named after it, which
// scripts/services.sh writes (see "faults" there).
const FaultsFolder = "faults"

// Server is a server that bench may kill while it measures a driver, as a
// line of its file in [FaultsFolder] names it: "server" and six fields,
// tab-separated.
type Server struct {
	Name    string // for messages: "redis-7001"
	Addr    string // its client address, host:port, as the driver's DSN names it
	PIDFile string // the file holding its PID
	Dir     string // the cwd its process runs in: a PID elsewhere is not ours
	Start   string // the launcher that starts it again, and returns once it is started
	Status  string // where it tells its role (a URL or host:port), "" if nowhere
}

// ServerFile is a driver's file in [FaultsFolder]: its servers, and how
// they keep what they acknowledged.
type ServerFile struct {
	Durability string
	Servers    []Server
}

// errNotInServersDir is why a driver has no fault: its file is missing.
var errNotInServersDir = errors.New("no fault: not in --servers-dir")

// ReadServerFile reads the file of driverName in dir's [FaultsFolder]. A
// missing file is errNotInServersDir.
func ReadServerFile(dir, driverName string) (ServerFile, error) {
	path := filepath.Join(dir, FaultsFolder, driverName)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ServerFile{}, errNotInServersDir
	}
	if err != nil {
		return ServerFile{}, err
	}
	defer f.Close()
	var sf ServerFile
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		switch {
		case fields[0] == "durability" && len(fields) == 2:
			sf.Durability = fields[1]
		case fields[0] == "server" && len(fields) == 7:
			s := Server{Name: fields[1], Addr: fields[2], PIDFile: fields[3], Dir: fields[4], Start: fields[5], Status: fields[6]}
			if s.Status == "-" {
				s.Status = ""
			}
			if !filepath.IsAbs(s.PIDFile) || !filepath.IsAbs(s.Dir) || !filepath.IsAbs(s.Start) {
				return ServerFile{}, fmt.Errorf("%s:%d: the pidfile, cwd and launcher must be absolute paths", path, n)
			}
			sf.Servers = append(sf.Servers, s)
		default:
			return ServerFile{}, fmt.Errorf("%s:%d: want \"durability\" TEXT or \"server\" and 6 fields, tab-separated", path, n)
		}
	}
	if err := sc.Err(); err != nil {
		return ServerFile{}, err
	}
	return sf, nil
}

// Reached returns the servers of sf whose address dsn names: bench kills
// only a server that the driver it measures talks to.
func (sf ServerFile) Reached(dsn string) []Server {
	var out []Server
	for _, s := range sf.Servers {
		if names(dsn, s.Addr) {
			out = append(out, s)
		}
	}
	return out
}

// names reports whether dsn holds addr, not followed by a digit (":7001"
// is not ":70012").
func names(dsn, addr string) bool {
	for rest := dsn; ; {
		i := strings.Index(rest, addr)
		if i < 0 {
			return false
		}
		rest = rest[i+len(addr):]
		if rest == "" || rest[0] < '0' || rest[0] > '9' {
			return true
		}
	}
}
