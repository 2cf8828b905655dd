-- The device authorization endpoint (RFC 8628) of an OAuth 2.0 endpoint's
-- application: a person gets an account its refresh token from the
-- console or the CLI with it. Empty: none.
ALTER TABLE endpoints ADD COLUMN oauth2_device_url text NOT NULL DEFAULT '';
