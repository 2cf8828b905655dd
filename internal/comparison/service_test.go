package comparison

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/dbtest"
	"github.com/mailmigrate/mailmigrate/internal/secret"
)

// serviceTool is the whole service as a user runs it: `mailmigrate serve`
// in a process of its own on a PostgreSQL database, driven through its
// API. A pass is POST /tasks/{id}/run until the run's last event on the
// live event stream (as the CLI and the console follow a run): the API,
// the job queue, admission, the engine and the servers all count. Its CPU
// is the service's and its PostgreSQL's.
type serviceTool struct{ bin string }

func (serviceTool) name() string { return "service" }

// serviceRun is the service of one run, started by its first pass.
type serviceRun struct {
	cmd    *exec.Cmd
	base   string // http://host:port
	token  string // the API token it was started with
	client *api.ClientWithResponses
	taskID int64
}

func (t serviceTool) migrate(ctx context.Context, r *run) (usage, error) {
	if r.service == nil {
		s, err := t.start(r)
		if err != nil {
			return usage{}, err
		}
		r.service = s
	}
	s := r.service
	after, err := s.lastEventSeq(ctx)
	if err != nil {
		return usage{}, err
	}
	events, err := s.dialEvents(ctx, after)
	if err != nil {
		return usage{}, err
	}
	defer events.Close()
	cpuBefore := groupCPU(s.cmd.Process.Pid) + postgresCPU()
	start := time.Now()
	if resp, err := s.client.RunTaskWithResponse(ctx, s.taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		return usage{}, fmt.Errorf("POST run: %v %v", err, resp)
	}
	task, err := s.waitRunEnd(ctx, events)
	peak, _ := readVmHWM(s.cmd.Process.Pid) // the process's peak so far
	u := usage{wall: time.Since(start), cpu: groupCPU(s.cmd.Process.Pid) + postgresCPU() - cpuBefore, maxRSS: peak, procs: 1}
	if err != nil {
		return u, err
	}
	if task.State != api.TaskStateCompleted {
		return u, fmt.Errorf("pass %d ended %s", r.pass, task.State)
	}
	if r.pass > 1 && task.Totals.MessagesCopied != 0 {
		return u, fmt.Errorf("the re-run copied %d messages", task.Totals.MessagesCopied)
	}
	return u, nil
}

// start runs the service on a new database and makes the task of r.
func (t serviceTool) start(r *run) (*serviceRun, error) {
	s, err := launchService(r.b, t.bin, r.dir, max(r.parallel, 4))
	if err != nil {
		return nil, err
	}
	return s, s.createTask(r)
}

// launchService runs `mailmigrate serve` from bin on a new database, with
// its data in dir and workers workers, stopped when tb ends, and returns
// it ready, with a client that sends its API token.
func launchService(tb testing.TB, bin, dir string, workers int) (*serviceRun, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	// The API asks for a token, as it does in production: its check is
	// part of what a request costs.
	token := "mmt_bench_" + base64.RawURLEncoding.EncodeToString(secret.NewKey())
	cmd := exec.Command(bin, "serve", "--listen", addr, "--database-url", dbtest.URL(tb), "--data-dir", dir,
		"--workers", fmt.Sprint(workers), "--max-connections-per-host", "0", "--log-level", "warn")
	cmd.Env = append(os.Environ(), "MAILMIGRATE_SECRET_KEY="+base64.StdEncoding.EncodeToString(secret.NewKey()),
		"MAILMIGRATE_API_TOKEN="+token)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	log, err := os.Create(filepath.Join(dir, "service.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &serviceRun{cmd: cmd, token: token}
	tb.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck // it may have died; Wait says
		cmd.Wait()                          //nolint:errcheck // stopping
		log.Close()
	})
	s.base = "http://" + addr
	if err := waitReady(s.base + "/readyz"); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, readTail(log.Name()))
	}
	s.client, err = api.NewClientWithResponses(s.base+"/api/v1", api.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}))
	return s, err
}

// createTask registers both servers and a task of every account of r.
func (s *serviceRun) createTask(r *run) error {
	ctx := context.Background()
	var ids [2]int64
	for i, d := range []struct {
		host string
		port int
	}{{r.src.dovecot.Host, r.src.dovecot.Port}, {r.dst.Host, r.dst.Port}} {
		resp, err := s.client.CreateEndpointWithResponse(ctx, api.EndpointInput{Host: d.host, Port: d.port, TlsMode: api.TLSModePlain})
		if err != nil || resp.JSON201 == nil {
			return fmt.Errorf("create endpoint: %v %v", err, resp)
		}
		ids[i] = resp.JSON201.Id
	}
	task, err := s.client.CreateTaskWithResponse(ctx, api.TaskInput{Name: "bench", SourceEndpointId: ids[0], DestinationEndpointId: ids[1],
		Options: &api.TaskOptions{ParallelAccounts: r.parallel}})
	if err != nil || task.JSON201 == nil {
		return fmt.Errorf("create task: %v %v", err, task)
	}
	s.taskID = task.JSON201.Id
	var csv strings.Builder
	for _, a := range r.src.accounts {
		fmt.Fprintf(&csv, "%s,%s,%s,%s\n", a.srcLogin, a.srcPassword, a.dstLogin, a.dstPassword)
	}
	resp, err := s.client.ImportAccountsWithBodyWithResponse(ctx, s.taskID, "text/csv", strings.NewReader(csv.String()))
	if err != nil || resp.StatusCode() != http.StatusCreated {
		return fmt.Errorf("import: %v %v", err, resp)
	}
	return nil
}

// lastEventSeq returns the seq of the task's newest event, 0 with none.
func (s *serviceRun) lastEventSeq(ctx context.Context) (int64, error) {
	var after int64
	for {
		limit := 1000
		resp, err := s.client.ListTaskEventsWithResponse(ctx, s.taskID, &api.ListTaskEventsParams{After: &after, Limit: &limit})
		if err != nil || resp.JSON200 == nil {
			return 0, fmt.Errorf("list events: %v %v", err, resp)
		}
		page := *resp.JSON200
		if len(page) == 0 {
			return after, nil
		}
		after = page[len(page)-1].Seq
	}
}

// dialEvents opens the task's live event stream from the event after
// seq after.
func (s *serviceRun) dialEvents(ctx context.Context, after int64) (*websocket.Conn, error) {
	u := strings.Replace(s.base, "http", "ws", 1) + fmt.Sprintf("/api/v1/events/ws?task_id=%d&after=%d", s.taskID, after)
	conn, _, err := websocket.DefaultDialer.DialContext(ctx, u, http.Header{"Authorization": {"Bearer " + s.token}})
	if err != nil {
		return nil, fmt.Errorf("event stream: %w", err)
	}
	return conn, nil
}

// waitRunEnd reads the event stream until the run's last event, as a
// user's client follows a run (the CLI, the console), and returns the
// task as the run left it.
func (s *serviceRun) waitRunEnd(ctx context.Context, events *websocket.Conn) (api.Task, error) {
	stop := context.AfterFunc(ctx, func() { events.Close() })
	defer stop()
	for {
		var e api.Event
		if err := events.ReadJSON(&e); err != nil {
			return api.Task{}, fmt.Errorf("event stream: %w", err)
		}
		if e.Kind == api.EventKindRunFinished || e.Kind == api.EventKindRunCanceled {
			break
		}
	}
	resp, err := s.client.GetTaskWithResponse(ctx, s.taskID)
	if err != nil || resp.JSON200 == nil {
		return api.Task{}, fmt.Errorf("get task: %v %v", err, resp)
	}
	return *resp.JSON200, nil
}

func waitReady(url string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the service did not get ready at %s", url)
}

// postgresCPU is the CPU time the machine's PostgreSQL processes have
// used so far: the service's database work.
func postgresCPU() time.Duration {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	var total time.Duration
	for _, path := range paths {
		line, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if s, err := parseProcStat(string(line)); err == nil && s.comm == "postgres" {
			total += s.cpu
		}
	}
	return total
}

// buildService builds the mailmigrate binary into dir.
func buildService(b *testing.B, dir string) string {
	b.Helper()
	bin := filepath.Join(dir, "mailmigrate")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/mailmigrate/mailmigrate/cmd/mailmigrate").CombinedOutput()
	if err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func readTail(path string) string {
	data, _ := os.ReadFile(path)
	return tail(string(data), 20)
}
