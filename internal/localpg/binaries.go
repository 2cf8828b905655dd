package localpg

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ErrNoBinaries means no PostgreSQL server binaries were found. Its text is
// the one line an operator needs.
var ErrNoBinaries = errors.New("no PostgreSQL server binaries (initdb, postgres) found in PATH, `pg_config --bindir` or /usr/lib/postgresql/*/bin: " +
	"install them (Debian: apt-get install postgresql) or set DATABASE_URL to a PostgreSQL 13+ server")

// FindBinaries returns the directory holding initdb and postgres: the one on
// PATH, else pg_config's bindir, else the newest /usr/lib/postgresql/N/bin.
func FindBinaries() (string, error) {
	var candidates []string
	if initdb, err := exec.LookPath("initdb"); err == nil {
		candidates = append(candidates, filepath.Dir(initdb))
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	return findIn(append(candidates, debianBinDirs()...))
}

// findIn returns the first of candidates that holds both an executable
// initdb and an executable postgres.
func findIn(candidates []string) (string, error) {
	for _, dir := range candidates {
		if isExecutable(filepath.Join(dir, "initdb")) && isExecutable(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
	}
	return "", ErrNoBinaries
}

// debianBinDirs lists /usr/lib/postgresql/N/bin, newest major version first.
func debianBinDirs() []string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	major := func(dir string) int {
		n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
		return n
	}
	sort.Slice(dirs, func(i, j int) bool { return major(dirs[i]) > major(dirs[j]) })
	return dirs
}

func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir() && info.Mode()&0o111 != 0
}
