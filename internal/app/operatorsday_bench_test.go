package app_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/migration"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
	"github.com/mailmigrate/mailmigrate/internal/worker"
)

// BenchmarkOperatorsDayBehindAPenalty is the operator's day of issue #31
// measured whole: one task of 2 000 accounts from a hosting panel's list
// (300 real mailboxes, 5 of them with a wrong password, and 1 700 logins
// that do not exist), on a source Dovecot that delays logins after
// failures as shipped (AuthPenalty). The operator tests every login, runs
// the accounts that passed while the test goes on, lets the test end,
// runs what passed since, and makes the final pass. It prints a timeline:
// what the task says at each step and every minute, and the failed logins
// the service caused, from the source's log. The operator raises the
// failed-login limit for this server, as one who owns it may: at the
// fail2ban-safe default the dead logins would take days by design.
//
// It takes about two hours, nearly all of it the server's delays:
//
//	go test -run '^$' -bench OperatorsDay -benchtime 1x -timeout 4h ./internal/app
//
// MAILMIGRATE_DAY_SCALE (e.g. 0.1) shrinks every count, for a quick look.
func BenchmarkOperatorsDayBehindAPenalty(b *testing.B) {
	scale := 1.0
	if v := os.Getenv("MAILMIGRATE_DAY_SCALE"); v != "" {
		var err error
		if scale, err = strconv.ParseFloat(v, 64); err != nil || scale <= 0 {
			b.Fatalf("MAILMIGRATE_DAY_SCALE=%q: a positive number, please", v)
		}
	}
	size := func(n int) int { return max(1, int(float64(n)*scale)) }
	accounts, real, wrong := size(2000), size(300), size(5)
	for range b.N {
		operatorsDay(b, accounts, real, wrong)
	}
}

// dayList is the panel's list: real mailboxes and logins that do not
// exist, mixed as a panel lists them, some real ones with a wrong
// password.
type dayList struct {
	users map[string]string // the source's real users and their passwords
	csv   string
	good  []string // the logins that work
}

func newDayList(accounts, real, wrong int) dayList {
	list := dayList{users: map[string]string{}}
	logins := make([]string, 0, accounts)
	for i := range accounts {
		login := fmt.Sprintf("gone%04d", i)
		if i < real {
			login = fmt.Sprintf("user%04d", i)
			list.users[login] = "pw-" + login
		}
		logins = append(logins, login)
	}
	rand.New(rand.NewPCG(31, 2000)).Shuffle(len(logins), func(i, j int) { logins[i], logins[j] = logins[j], logins[i] })
	var csv strings.Builder
	wrongLeft := wrong
	for _, login := range logins {
		password, isReal := list.users[login]
		switch {
		case !isReal:
			password = "pw-" + login
		case wrongLeft > 0:
			password, wrongLeft = "wrong-"+login, wrongLeft-1
		default:
			list.good = append(list.good, login)
		}
		fmt.Fprintf(&csv, "%s,%s\n", login, password)
	}
	list.csv = csv.String()
	return list
}

func operatorsDay(b *testing.B, accounts, real, wrong int) {
	ctx := context.Background()
	s := servicetest.Start(b, servicetest.Options{Workers: worker.Options{
		LoginFailureLimit: migration.LoginFailureLimit{Max: 100000, Window: 10 * time.Minute}}})
	list := newDayList(accounts, real, wrong)
	old := imaptest.StartDovecot(b, imaptest.Options{Users: list.users, AuthPenalty: true})
	neu := imaptest.StartDovecot(b, imaptest.Options{Users: list.users})
	for login := range list.users {
		old.Load(b, login, imaptest.BuildCorpus(imaptest.CorpusOptions{Seed: int64(len(login)), Messages: 4}))
	}
	taskID := createTask(b, s, createEndpoint(b, s, old.Host, old.Port), createEndpoint(b, s, neu.Host, neu.Port), "")
	day := &dayClock{b: b, s: s, taskID: taskID, source: old, start: time.Now()}
	fmt.Printf("operator's day: %d accounts, %d real (%d with a wrong password), %d logins that do not exist; %d logins work\n",
		accounts, real, wrong, accounts-real, len(list.good))

	importAccounts(b, s, taskID, list.csv)
	day.step("imported")

	if resp, err := s.Client.TestTaskWithResponse(ctx, taskID, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		b.Fatalf("test: %v %v", err, resp)
	}
	day.step("login test started")
	first := day.until("the first login works", func(task api.Task) bool { return task.Logins.Working > 0 })
	fmt.Printf("  the first account could run %s after the test began\n", first.Round(time.Second))

	// Half the good logins known: the operator runs them while the test
	// goes on.
	half := int64(len(list.good) / 2)
	day.until(fmt.Sprintf("%d logins work", half), func(task api.Task) bool { return task.Logins.Working >= half })
	passed := api.LoginTestFilterPassed
	run, err := s.Client.RunTaskWithResponse(ctx, taskID, &api.RunTaskParams{}, api.AccountSelection{LoginTest: &passed})
	if err != nil || run.StatusCode() != http.StatusAccepted {
		b.Fatalf("run the accounts that passed: %v %v", err, run)
	}
	day.step("ran the accounts that passed, beside the test")
	day.untilPasses(1)
	day.step("that pass ended")

	day.until("the login test ends", func(task api.Task) bool { return !task.Tests.Running })
	day.step("login test ended")

	run, err = s.Client.RunTaskWithResponse(ctx, taskID, &api.RunTaskParams{}, api.AccountSelection{LoginTest: &passed})
	if err != nil || run.StatusCode() != http.StatusAccepted {
		b.Fatalf("run the accounts that passed: %v %v", err, run)
	}
	day.untilPasses(2)
	day.step("ran every account that passed")

	before := old.AuthFailures(b)
	if resp, err := s.Client.StartFinalPassWithResponse(ctx, taskID); err != nil || resp.StatusCode() != http.StatusAccepted {
		b.Fatalf("final pass: %v %v", err, resp)
	}
	day.untilPasses(3)
	day.step("final pass ended")
	if caused := old.AuthFailures(b) - before; caused != 0 {
		b.Errorf("the final pass caused %d failed logins", caused)
	}
	for _, login := range list.good {
		if got, want := len(neu.Read(b, login).Messages), len(old.Read(b, login).Messages); got != want {
			b.Errorf("%s has %d of its %d messages on the destination", login, got, want)
		}
	}
}

// dayClock prints what the task says, with the time since the day began
// and the failed logins the source saw.
type dayClock struct {
	b      *testing.B
	s      *servicetest.Service
	taskID int64
	source *imaptest.Dovecot
	start  time.Time
}

func (d *dayClock) task() api.Task {
	d.b.Helper()
	resp, err := d.s.Client.GetTaskWithResponse(context.Background(), d.taskID)
	if err != nil || resp.JSON200 == nil {
		d.b.Fatalf("task: %v %v", err, resp)
	}
	return *resp.JSON200
}

// step prints the task's summary after a step.
func (d *dayClock) step(what string) {
	d.b.Helper()
	task := d.task()
	life, err := d.s.Client.GetTaskLifecycleWithResponse(context.Background(), d.taskID)
	if err != nil || life.JSON200 == nil {
		d.b.Fatalf("lifecycle: %v %v", err, life)
	}
	a, l, tt := task.Accounts, task.Logins, task.Totals
	fmt.Printf("%8s  %s: task %s, %q\n", d.since(), what, task.State, life.JSON200.Words)
	fmt.Printf("          accounts: %d completed, %d with errors, %d failed, %d canceled, %d idle, %d queued, %d running\n",
		a.Completed, a.CompletedWithErrors, a.Failed, a.Canceled, a.Idle, a.Queued, a.Running)
	fmt.Printf("          logins: %d work, %d refused, %d untested; copied to date: %d messages, %d bytes\n",
		l.Working, l.Refused, l.Untested, tt.MessagesCopiedToDate, tt.BytesCopiedToDate)
	fmt.Printf("          failed logins the source saw: %d\n", d.source.AuthFailures(d.b))
}

// until polls the task until done holds, printing its login test every
// minute, and returns how long it took.
func (d *dayClock) until(what string, done func(api.Task) bool) time.Duration {
	d.b.Helper()
	began, lastLine := time.Now(), time.Now()
	for {
		task := d.task()
		if done(task) {
			fmt.Printf("%8s  %s\n", d.since(), what)
			return time.Since(began)
		}
		if time.Since(lastLine) >= time.Minute {
			lastLine = time.Now()
			left := "?"
			if tl := task.Tests.TimeLeftSeconds; tl != nil {
				left = (time.Duration(*tl) * time.Second).String()
			}
			fmt.Printf("%8s    test: %d of %d tested, %d failed, time left %s; %d logins work; failed logins seen %d\n            %s\n",
				d.since(), task.Tests.Tested, task.Tests.Total, task.Tests.Failed, left, task.Logins.Working,
				d.source.AuthFailures(d.b), task.Tests.Pace)
		}
		time.Sleep(2 * time.Second)
	}
}

// untilPasses waits until the task has n passes, the last one ended.
func (d *dayClock) untilPasses(n int) {
	d.b.Helper()
	for {
		resp, err := d.s.Client.ListTaskPassesWithResponse(context.Background(), d.taskID)
		if err != nil || resp.JSON200 == nil {
			d.b.Fatalf("passes: %v %v", err, resp)
		}
		passes := *resp.JSON200
		if len(passes) >= n && passes[len(passes)-1].EndedAt != nil {
			last := passes[len(passes)-1]
			fmt.Printf("%8s  pass %d ended (%s, took %s): %d accounts, %d completed, %d failed, %d canceled; %d messages copied\n",
				d.since(), last.Pass, last.StartedBy, last.EndedAt.Sub(last.StartedAt).Round(time.Second), last.Accounts,
				last.AccountsCompleted, last.AccountsFailed, last.AccountsCanceled, last.MessagesCopied)
			return
		}
		time.Sleep(2 * time.Second)
	}
}

func (d *dayClock) since() string { return time.Since(d.start).Round(time.Second).String() }
