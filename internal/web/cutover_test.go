package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/delivery"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
	"github.com/mailmigrate/mailmigrate/internal/smtptest"
	"github.com/mailmigrate/mailmigrate/internal/testsupport"
)

// testCutover: on the task page an administrator schedules delta passes
// and the final pass in the server's time zone, pauses and resumes the
// task, and runs the final pass now, which ends verified.
func testCutover(t *testing.T, browser context.Context) {
	smtp := smtptest.Start(t, 0)
	mailServer, err := delivery.ParseMailServer("smtp+plain://"+smtp.Addr(), "", "mailmigrate@acme.example")
	if err != nil {
		t.Fatal(err)
	}
	s := startSiteWith(t, "", servicetest.Options{SchedulePoll: 100 * time.Millisecond, Mail: &mailServer})
	old, neu, taskID := s.aliceTask(t, "weekend cut-over", 5, 10)
	ctx := context.Background()
	life, err := s.Client.GetTaskLifecycleWithResponse(ctx, taskID)
	if err != nil || life.JSON200 == nil {
		t.Fatalf("lifecycle: %v %v", err, life)
	}
	zone, err := time.LoadLocation(life.JSON200.TimeZone)
	if err != nil {
		t.Fatal(err)
	}

	tb := openTab(t, browser, s)
	tb.open(fmt.Sprintf("#/tasks/%d", taskID))
	tb.waitText("#cutover-stage", "planned: no pass yet")
	tb.waitText("#cutover-zone", "Times are in "+zone.String())
	final := time.Now().In(zone).Add(72 * time.Hour).Truncate(time.Minute)
	tb.fill(map[string]string{
		"#schedule-form [name=every_hours]": "2",
		"#schedule-form [name=final_at]":    final.Format("2006-01-02T15:04"),
	})
	tb.click("#schedule-form button.primary")
	tb.waitText("#cutover .notice.ok", "Schedule saved: delta passes every 2 hours; final pass "+final.Format("Mon 2 Jan 15:04 MST"))
	sch, err := s.Client.GetTaskScheduleWithResponse(ctx, taskID)
	if err != nil || sch.JSON200 == nil || sch.JSON200.EveryMinutes != 120 || sch.JSON200.FinalAt == nil || !sch.JSON200.FinalAt.Equal(final) {
		t.Errorf("the schedule stored: %v %+v, want every 120 minutes and the final pass at %s", err, sch.JSON200, final)
	}
	tb.waitText("#cutover-stage", "next pass ")
	// The form reads a wall time in the server's zone, whatever the
	// browser's: summer and winter time in Berlin, and New York.
	instants, err := chromedp.Run(tb.ctx, chromedp.Evaluate[[]string](`import('/assets/cutover.js').then((m) => [
		m.zonedToInstant('2026-11-28T22:00', 'Europe/Berlin'), m.zonedToInstant('2026-07-01T12:00', 'Europe/Berlin'),
		m.zonedToInstant('2026-11-28T22:00', 'America/New_York')])`,
		chromedp.EvalAwaitPromise))
	if want := []string{"2026-11-28T21:00:00.000Z", "2026-07-01T10:00:00.000Z", "2026-11-29T03:00:00.000Z"}; err != nil || !slices.Equal(instants, want) {
		t.Errorf("wall times read in a zone: %v %v, want %v", instants, err, want)
	}

	tb.click(`#cutover-actions button[data-action="pause"]`)
	tb.confirm("Pause this task?", true)
	tb.waitText("#cutover-stage", "paused since ")
	tb.click(`#cutover-actions button[data-action="resume"]`)
	tb.confirm("Resume this task?", true)
	tb.waitJS(`!document.querySelector('#cutover-stage').textContent.includes('paused since')`, "the task resumed")

	// Word when it is done: a webhook, its secret never shown again.
	const secret = "whsec-console-0123456789"
	var calls atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mailmigrate-Signature") != "" {
			calls.Add(1)
		}
	}))
	t.Cleanup(receiver.Close)
	tb.fill(map[string]string{"#webhook-form [name=url]": receiver.URL, "#webhook-form [name=secret]": secret})
	tb.choose("#webhook-form [name=calls]", "per_account")
	tb.click("#webhook-form button.primary")
	tb.waitText("#webhook .notice.ok", "Webhook saved.")
	if hook, err := s.Client.GetTaskWebhookWithResponse(ctx, taskID); err != nil || hook.JSON200 == nil || hook.JSON200.Calls != api.WebhookCallsPerAccount {
		t.Errorf("the form saved the webhook as %v %v, want calls per account", err, hook)
	}
	if evaluate[bool](tb, `document.body.innerHTML.includes(`+quote(secret)+`)`) {
		t.Error("the page shows the webhook's secret")
	}
	tb.click(`#webhook-form button[data-action="test-webhook"]`)
	tb.waitText("#webhook .notice.ok", "The receiver took the test call (HTTP 200")
	if calls.Load() != 1 {
		t.Errorf("after Send a test the receiver had %d signed calls, want 1", calls.Load())
	}

	tb.fill(map[string]string{"#mail-form [name=mail_to]": "it@acme.example, bad address"})
	tb.click("#mail-form button.primary")
	tb.waitText("#webhook .notice.error", `Recipients not saved: The address "bad address" is not a mail address`)
	tb.fill(map[string]string{"#mail-form [name=mail_to]": "it@acme.example"})
	tb.click("#mail-form button.primary")
	tb.waitText("#webhook .notice.ok", "Recipients saved.")

	// The bulk first: a final pass needs a pass before it to verify.
	if resp, err := s.Client.RunTaskWithResponse(ctx, taskID, nil, api.AccountSelection{}); err != nil || resp.StatusCode() != http.StatusAccepted {
		t.Fatalf("run: %v %v", err, resp)
	}
	tb.waitText("#cutover-stage .badge", "in sync")
	tb.click(`#cutover-actions button[data-action="final-pass"]`)
	tb.confirm("Run the final pass of every account now?", true)
	tb.waitText("#cutover-stage .badge", "verified")
	tb.waitText("#cutover-stage", "found on the destination")
	tb.waitText(`#pass-list tr[data-pass="2"]`, "final pass")
	tb.waitText("#event-log", "final pass 2 verified")
	tb.waitJS(`[...document.querySelectorAll('#delivery-list tr[data-state="delivered"]')].some((r) => r.textContent.includes('final.verified'))`,
		"the final.verified call delivered, in the log")
	testsupport.Eventually(t, 10*time.Second, func() error {
		for _, m := range smtp.Messages() {
			if strings.Contains(m.Data, "final pass 2 verified") {
				return nil
			}
		}
		return fmt.Errorf("%d mails, none of the final pass", len(smtp.Messages()))
	})
	if calls.Load() < 3 {
		t.Errorf("the receiver had %d signed calls, want the test, run.finished and final.verified", calls.Load())
	}
	tb.screenshot("cutover-verified")
	if n := len(neu.Read(t, "alice").Messages); n != len(old.Read(t, "alice").Messages) {
		t.Errorf("%d messages on the destination, want the source's", n)
	}
}
