-- The authorization endpoint of an OAuth 2.0 endpoint's application: a
-- person signs in there in a browser to give an account its refresh token
-- (the authorization code grant with PKCE, RFC 6749 §4.1 and RFC 7636).
-- Empty: none.
ALTER TABLE endpoints ADD COLUMN oauth2_authorization_url text NOT NULL DEFAULT '';

-- Browser authorizations under way: the provider sends the browser back
-- with the state, to whichever process takes the request, after a restart
-- too. The state is kept as its SHA-256 digest and the PKCE code verifier
-- sealed like a password: either would let the code be redeemed.
CREATE TABLE oauth_authorizations (
    state_digest bytea PRIMARY KEY,
    task_id bigint NOT NULL,
    account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    side text NOT NULL CHECK (side IN ('source', 'destination')),
    redirect_uri text NOT NULL,
    code_verifier bytea NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX oauth_authorizations_account ON oauth_authorizations (account_id, side);
