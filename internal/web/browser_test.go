package web_test

import "testing"

// TestBrowser drives the front end in a real Chromium. The subtests share
// one browser, each in its own tab and browser context.
func TestBrowser(t *testing.T) {
	browser := startBrowser(t)
	t.Run("Endpoints", func(t *testing.T) { t.Parallel(); testEndpoints(t, browser) })
	t.Run("TaskRun", func(t *testing.T) { t.Parallel(); testTaskRun(t, browser) })
	t.Run("ConnectionTestLog", func(t *testing.T) { t.Parallel(); testConnectionTestLog(t, browser) })
	t.Run("TokenPrompt", func(t *testing.T) { t.Parallel(); testTokenPrompt(t, browser) })
	t.Run("SignInLink", func(t *testing.T) { t.Parallel(); testSignInLink(t, browser) })
	t.Run("RetryAccount", func(t *testing.T) { t.Parallel(); testRetryAccount(t, browser) })
	t.Run("CancelRun", func(t *testing.T) { t.Parallel(); testCancelRun(t, browser) })
	t.Run("ProgressEvents", func(t *testing.T) { t.Parallel(); testProgressEvents(t, browser) })
	t.Run("ManyAccounts", func(t *testing.T) { t.Parallel(); testManyAccounts(t, browser) })
	t.Run("BulkActions", func(t *testing.T) { t.Parallel(); testBulkActions(t, browser) })
	t.Run("EndpointCheck", func(t *testing.T) { t.Parallel(); testEndpointCheck(t, browser) })
	t.Run("ServiceDown", func(t *testing.T) { t.Parallel(); testServiceDownAndEmptyTask(t, browser) })
	t.Run("ActWhileOthersRun", func(t *testing.T) { t.Parallel(); testActWhileOthersRun(t, browser) })
	t.Run("LongLoginTest", func(t *testing.T) { t.Parallel(); testLongLoginTest(t, browser) })
	t.Run("TaskSettings", func(t *testing.T) { t.Parallel(); testTaskSettings(t, browser) })
	t.Run("ConfirmOnManyAccounts", func(t *testing.T) { t.Parallel(); testConfirmOnManyAccounts(t, browser) })
	t.Run("AccountPage", func(t *testing.T) { t.Parallel(); testAccountPage(t, browser) })
	t.Run("AlteredCopies", func(t *testing.T) { t.Parallel(); testAlteredCopies(t, browser) })
	t.Run("Activity", func(t *testing.T) { t.Parallel(); testActivity(t, browser) })
	t.Run("People", func(t *testing.T) { t.Parallel(); testPeople(t, browser) })
	t.Run("SignIn", func(t *testing.T) { t.Parallel(); testSignIn(t, browser) })
	t.Run("MasterLogin", func(t *testing.T) { t.Parallel(); testMasterLogin(t, browser) })
	t.Run("OAuth2Endpoint", func(t *testing.T) { t.Parallel(); testOAuth2Endpoint(t, browser) })
	t.Run("AuthorizeAccount", func(t *testing.T) { t.Parallel(); testAuthorizeAccount(t, browser) })
	t.Run("AuthorizeInTheBrowser", func(t *testing.T) { t.Parallel(); testAuthorizeInTheBrowser(t, browser) })
	t.Run("PausedAccount", func(t *testing.T) { t.Parallel(); testPausedAccount(t, browser) })
	t.Run("Cutover", func(t *testing.T) { t.Parallel(); testCutover(t, browser) })
	t.Run("Plan", func(t *testing.T) { t.Parallel(); testPlan(t, browser) })
	t.Run("VerifyBothServers", func(t *testing.T) { t.Parallel(); testVerifyBothServers(t, browser) })
	t.Run("SieveScripts", func(t *testing.T) { t.Parallel(); testSieveScripts(t, browser) })
	t.Run("FormErrorsInWords", func(t *testing.T) { t.Parallel(); testFormErrorsInWords(t, browser) })
}
