//go:build tools

// Pins livekit-sip as a dependency so `go build github.com/livekit/sip/cmd/livekit-sip` resolves here.
package tools

import _ "github.com/livekit/sip/cmd/livekit-sip"
