// Package api embeds the OpenAPI description, the contract from which
// gen/api is generated, so that the service can serve it as written.
package api

import _ "embed"

// OpenAPIYAML is api/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte
