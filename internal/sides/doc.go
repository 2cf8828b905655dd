// Package sides makes the copy engine's sides of the domain's endpoints
// and accounts: where the server is, how an account logs in to it (its
// password, the endpoint's master login, OAuth 2.0 tokens) and the
// endpoint's limits; and it checks an endpoint's server for a person
// waiting (POST /endpoints/{id}/check). The workers and the HTTP side
// both reach the engine through it, so that neither spells the
// conversion.
package sides
