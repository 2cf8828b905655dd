package postgres

import (
	"encoding/json"
	"maps"
	"slices"
	"sync"

	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// optionsMemoSize bounds the stored texts optionsMemo remembers; past it,
// it starts again empty.
const optionsMemoSize = 4096

// optionsMemo decodes tasks.options, remembering what each stored text
// decoded to. A listing of the tasks decodes every task's options, and a
// console lists them every few seconds: decoding them again each time
// (their folder filters compiled as regular expressions) was a fifth of
// what listing 200 tasks cost the service (BenchmarkAPIRequestCPU).
type optionsMemo struct {
	mu     sync.Mutex
	byText map[string]migration.TaskOptions
}

func newOptionsMemo() *optionsMemo {
	return &optionsMemo{byText: map[string]migration.TaskOptions{}}
}

// decode reads a task's options as tasks.options keeps them. Each caller
// gets its own folder map and filter lists; the compiled expressions,
// which do not change, are shared.
func (m *optionsMemo) decode(raw []byte) (migration.TaskOptions, error) {
	m.mu.Lock()
	options, ok := m.byText[string(raw)]
	m.mu.Unlock()
	if !ok {
		var stored taskOptions
		if err := json.Unmarshal(raw, &stored); err != nil {
			return migration.TaskOptions{}, err
		}
		var err error
		if options, err = stored.domain(); err != nil {
			return migration.TaskOptions{}, err
		}
		m.mu.Lock()
		if len(m.byText) >= optionsMemoSize {
			clear(m.byText)
		}
		m.byText[string(raw)] = options
		m.mu.Unlock()
	}
	options.IncludeFolders = slices.Clone(options.IncludeFolders)
	options.ExcludeFolders = slices.Clone(options.ExcludeFolders)
	options.FolderMap = maps.Clone(options.FolderMap)
	return options, nil
}
