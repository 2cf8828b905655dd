package oauth

import (
	"context"
	"errors"
	"time"

	"golang.org/x/oauth2"
)

// DeviceAuthorization is a device authorization grant under way (RFC
// 8628): the user opens VerificationURI, enters UserCode and signs in.
type DeviceAuthorization struct {
	UserCode                string
	VerificationURI         string
	VerificationURIComplete string
	Expires                 time.Time
	response                *oauth2.DeviceAuthResponse
}

// StartDevice asks the device authorization endpoint for a user code.
func (c Config) StartDevice(ctx context.Context) (*DeviceAuthorization, error) {
	if c.DeviceURL == "" {
		return nil, errors.New("the endpoint has no device authorization URL")
	}
	da, err := c.signInConfig("").DeviceAuth(c.withClient(ctx))
	if err != nil {
		return nil, describe(err)
	}
	expires := da.Expiry
	if expires.IsZero() {
		expires = time.Now().Add(15 * time.Minute)
	}
	return &DeviceAuthorization{UserCode: da.UserCode, VerificationURI: da.VerificationURI,
		VerificationURIComplete: da.VerificationURIComplete, Expires: expires, response: da}, nil
}

// AwaitDevice polls the token endpoint until the user has signed in, and
// returns the refresh token and who signed in; a refusal (declined,
// expired) is a RefusedError.
func (c Config) AwaitDevice(ctx context.Context, da *DeviceAuthorization) (SignedIn, error) {
	token, err := c.signInConfig("").DeviceAccessToken(c.withClient(ctx), da.response)
	if err != nil {
		return SignedIn{}, describe(err)
	}
	return signedIn(token)
}
