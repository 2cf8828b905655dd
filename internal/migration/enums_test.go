package migration

import (
	"fmt"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	apispec "github.com/mailmigrate/mailmigrate/api"
)

// TestTheAPIAndTheDomainAgree: every enumeration and limit the OpenAPI
// file declares (and so the generated client, types and the front end's
// enums.js) is the domain's, value for value and in order. The SQL CHECK
// lists are compared with the same domain lists in internal/postgres.
func TestTheAPIAndTheDomainAgree(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(apispec.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	schema := func(name string) *openapi3.Schema {
		ref := doc.Components.Schemas[name]
		if ref == nil {
			t.Fatalf("no schema %s", name)
		}
		return ref.Value
	}
	strings := func(values []any) []string {
		out := make([]string, len(values))
		for i, v := range values {
			out[i] = fmt.Sprint(v)
		}
		return out
	}
	for _, e := range []struct {
		schema string
		domain []string
	}{
		{"TaskState", texts(TaskStates)},
		{"AccountState", texts(AccountStates)},
		{"EventKind", texts(EventKinds)},
		{"TLSMode", texts(TLSModes)},
		{"WebhookCalls", texts(WebhookCallPolicies)},
		{"AuthMethod", texts(AuthMethods)},
		{"MasterForm", texts(MasterForms)},
		{"OAuth2Grant", texts(OAuth2Grants)},
		{"AuthorizationFlow", texts(AuthorizationFlows)},
		{"TokenMechanism", texts(TokenMechanisms)},
		{"OAuth2Provider", texts(OAuth2Providers)},
		{"Profile", texts(Profiles)},
		{"GmailLabels", texts(GmailLabelPolicies)},
		{"AccountSort", sortTexts()},
		{"LoginTestFilter", texts(LoginTestFilters)},
		{"PassStarter", texts(PassStarters)},
		{"VerifyCopies", texts(VerifyDepths)},
		{"EndpointProblem", append([]string{"none"}, texts(ServerProblems)...)},
		{"Role", texts(Roles)},
		{"Stage", texts(Stages)},
		{"PlanState", texts(PlanStates)},
		{"PlanFilter", texts(PlanFilters)},
	} {
		if got := strings(schema(e.schema).Enum); !slices.Equal(got, e.domain) {
			t.Errorf("OpenAPI %s is %q, the domain's %q", e.schema, got, e.domain)
		}
	}
	running, _ := schema("TaskState").Extensions["x-running-states"].([]any)
	if got := strings(running); !slices.Equal(got, texts(RunningTaskStates)) {
		t.Errorf("OpenAPI TaskState x-running-states is %q, the domain's RunningTaskStates %q", got, texts(RunningTaskStates))
	}

	property := func(schemaName, name string) *openapi3.Schema {
		p := schema(schemaName).Properties[name]
		if p == nil {
			t.Fatalf("no property %s.%s", schemaName, name)
		}
		return p.Value
	}
	maxLength := func(s *openapi3.Schema) int {
		if s.MaxLength == nil {
			return -1
		}
		return int(*s.MaxLength)
	}
	// Enumerations that are a property's own.
	if got := strings(property("WebhookDelivery", "state").Enum); !slices.Equal(got, DeliveryStates) {
		t.Errorf("OpenAPI WebhookDelivery.state is %q, the domain's DeliveryStates %q", got, DeliveryStates)
	}
	for _, l := range []struct {
		field string
		api   int
		rule  int
	}{
		{"EndpointInput.role_label", maxLength(property("EndpointInput", "role_label")), MaxLabelBytes},
		{"EndpointInput.host", maxLength(property("EndpointInput", "host")), MaxHostBytes},
		{"EndpointAuthInput.master_login", maxLength(property("EndpointAuthInput", "master_login")), MaxLoginBytes},
		{"EndpointAuthInput.master_password", maxLength(property("EndpointAuthInput", "master_password")), MaxPasswordBytes},
		{"OAuth2Input.token_url", maxLength(property("OAuth2Input", "token_url")), MaxURLBytes},
		{"OAuth2Input.client_id", maxLength(property("OAuth2Input", "client_id")), MaxLoginBytes},
		{"OAuth2Input.device_url", maxLength(property("OAuth2Input", "device_url")), MaxURLBytes},
		{"OAuth2Input.client_secret", maxLength(property("OAuth2Input", "client_secret")), MaxClientSecretBytes},
		{"OAuth2Input.scope", maxLength(property("OAuth2Input", "scope")), MaxLabelBytes},
		{"OAuth2Input.tenant", maxLength(property("OAuth2Input", "tenant")), MaxHostBytes},
		{"AccountInput.source_refresh_token", maxLength(property("AccountInput", "source_refresh_token")), MaxRefreshTokenBytes},
		{"AccountInput.destination_refresh_token", maxLength(property("AccountInput", "destination_refresh_token")), MaxRefreshTokenBytes},
		{"TaskInput.name", maxLength(property("TaskInput", "name")), MaxLabelBytes},
		{"AccountInput.source_login", maxLength(property("AccountInput", "source_login")), MaxLoginBytes},
		{"AccountInput.destination_login", maxLength(property("AccountInput", "destination_login")), MaxLoginBytes},
		{"AccountInput.source_password", maxLength(property("AccountInput", "source_password")), MaxPasswordBytes},
		{"AccountInput.destination_password", maxLength(property("AccountInput", "destination_password")), MaxPasswordBytes},
		{"TaskOptions.include_folders items", maxLength(property("TaskOptions", "include_folders").Items.Value), maxFolderNameBytes},
		{"TaskOptions.exclude_folders items", maxLength(property("TaskOptions", "exclude_folders").Items.Value), maxFolderNameBytes},
		{"TaskOptions.include_folders maxItems", int(*property("TaskOptions", "include_folders").MaxItems), maxFolderPatterns},
		{"TaskOptions.exclude_folders maxItems", int(*property("TaskOptions", "exclude_folders").MaxItems), maxFolderPatterns},
		{"TaskOptions.folder_map values", maxLength(property("TaskOptions", "folder_map").AdditionalProperties.Schema.Value), maxFolderNameBytes},
		{"TaskOptions.folder_map maxProperties", int(*property("TaskOptions", "folder_map").MaxProps), maxFolderMapEntries},
		{"TaskOptions.parallel_accounts maximum", int(*property("TaskOptions", "parallel_accounts").Max), MaxParallelAccounts},
	} {
		if l.api != l.rule {
			t.Errorf("OpenAPI %s is %d, the domain's rule %d", l.field, l.api, l.rule)
		}
	}
}

func texts[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// sortTexts is every AccountSort as the API writes it: each order, then
// its reverse.
func sortTexts() []string {
	var out []string
	for _, by := range AccountOrders {
		out = append(out, AccountSort{By: by}.String(), AccountSort{By: by, Descending: true}.String())
	}
	return out
}
