package natsbus

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
)

// Identity is who a credentials file says its holder is.
type Identity struct {
	Name string // the credential's name (flotilla creds issue ROLE NAME)
	Role string // its role, "" when the file names none
	// Inbox is the inbox prefix its permissions allow.
	Inbox string
	// Key is its user's public key, from which the names of the consumers
	// it reads through derive (ReaderNames).
	Key string
	// Restricted: the credential may not do everything (not admin).
	Restricted bool
}

// ReadIdentity reads a credentials file: a user JWT and its seed.
func ReadIdentity(file string) (Identity, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return Identity{}, fmt.Errorf("credentials: %w", err)
	}
	tok, err := jwt.ParseDecoratedJWT(raw)
	if err != nil {
		return Identity{}, fmt.Errorf("credentials %s: %w", file, err)
	}
	uc, err := jwt.DecodeUserClaims(tok)
	if err != nil {
		return Identity{}, fmt.Errorf("credentials %s: not a user JWT: %w", file, err)
	}
	id := Identity{Name: uc.Name, Inbox: InboxPrefix(uc.Subject), Key: uc.Subject, Restricted: !uc.Pub.Allow.Contains(">")}
	for _, t := range uc.Tags {
		if r, ok := strings.CutPrefix(t, roleTag); ok {
			id.Role = r
		}
	}
	return id, nil
}

// credentialOptions are the connection options of a credentials file: the
// user JWT and seed, and the credential's own inbox prefix.
func credentialOptions(file string) ([]nats.Option, Identity, error) {
	if file == "" {
		return nil, Identity{}, nil
	}
	id, err := ReadIdentity(file)
	if err != nil {
		return nil, id, err
	}
	return []nats.Option{nats.UserCredentials(file), nats.CustomInboxPrefix(id.Inbox)}, id, nil
}

// Refusal is the bus refusing what a credential tried: a permission
// violation (the server drops the message and says so on the connection,
// asynchronously) or a credential refused or revoked.
type Refusal struct {
	Who     Identity
	Verb    string // "publish to", "subscribe to", or "connect" when the credential itself was refused
	Subject string
	Err     error
}

func (r *Refusal) Error() string {
	who := "this connection (no credentials)"
	if r.Who.Name != "" {
		who = fmt.Sprintf("credential %q (role %s)", r.Who.Name, orUnknown(r.Who.Role))
	}
	if r.Verb == "connect" {
		return fmt.Sprintf("refused: %s may not connect (revoked, or not issued for this server): %v", who, r.Err)
	}
	return fmt.Sprintf("refused: %s may not %s %s%s", who, r.Verb, r.Subject, explainSubject(r.Subject))
}

func (r *Refusal) Unwrap() error { return r.Err }

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

var (
	violationRe = regexp.MustCompile(`(?i)permissions violation for (publish|subscription) to "([^"]+)"`)
	streamAPIRe = regexp.MustCompile(`^\$JS\.API\.(?:STREAM\.(?:INFO|MSG\.GET)|DIRECT\.GET|CONSUMER\.(?:CREATE|INFO|MSG\.NEXT))\.([^.]+)`)
)

// explainSubject says what a JetStream API subject means in Flotilla's
// terms (reading a stream), so a refusal reads as what was tried.
func explainSubject(subject string) string {
	if m := streamAPIRe.FindStringSubmatch(subject); m != nil {
		return " (reading stream " + m[1] + ")"
	}
	return ""
}

// refusalOf turns an asynchronous connection error into a Refusal, or nil
// when it is none. A refused DELETE of a consumer is not one: reads and
// ordered consumers delete their short-lived consumers as a courtesy, and a
// credential without that right lets them expire instead.
func refusalOf(id Identity, err error) *Refusal {
	switch {
	case errors.Is(err, nats.ErrPermissionViolation):
		m := violationRe.FindStringSubmatch(err.Error())
		if m == nil {
			return &Refusal{Who: id, Verb: "use", Subject: "a subject", Err: err}
		}
		if strings.HasPrefix(m[2], jsAPI+"CONSUMER.DELETE.") {
			return nil
		}
		verb := "publish to"
		if strings.EqualFold(m[1], "subscription") {
			verb = "subscribe to"
		}
		return &Refusal{Who: id, Verb: verb, Subject: m[2], Err: err}
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthRevoked), errors.Is(err, nats.ErrAuthExpired):
		return &Refusal{Who: id, Verb: "connect", Err: err}
	}
	return nil
}

// connAuth is a connection's credential and the refusals it met.
type connAuth struct {
	id      Identity
	refused chan error // the first refusal; buffered, later ones dropped
}

// authOptions are the connection options of o's credentials (none without
// them) and the handler that reports refusals on the returned connAuth.
func authOptions(o Options) ([]nats.Option, *connAuth, error) {
	opts, id, err := credentialOptions(o.Credentials)
	if err != nil {
		return nil, nil, err
	}
	if u := o.user; u != nil {
		opts, id = u.options(), u.id
	}
	a := &connAuth{id: id, refused: make(chan error, 1)}
	opts = append(opts, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if r := refusalOf(id, err); r != nil {
			select {
			case a.refused <- r:
			default:
			}
		}
	}))
	return opts, a, nil
}

// connectError explains a failed first connection: a refused credential is
// a Refusal.
func (a *connAuth) connectError(url string, err error) error {
	if r := refusalOf(a.id, err); r != nil {
		return fmt.Errorf("connect to NATS at %s: %w", url, r)
	}
	if tlsErr := untrustedServer(err); tlsErr != nil {
		return fmt.Errorf("connect to NATS at %s: %w", url, tlsErr)
	}
	return fmt.Errorf("connect to NATS at %s: %w (is `flotilla up` running? set --nats-url or FLOTILLA_NATS_URL)", url, err)
}

// Refused delivers the first refusal this connection meets (a Refusal): a
// permission violation, or the credential refused or revoked. Callers
// select on it beside their work, so a refused verb fails at once instead
// of waiting for a reply that will never come.
func (b *Bus) Refused() <-chan error { return b.auth.refused }

// Identity is the credential this connection uses (zero without one).
func (b *Bus) Identity() Identity { return b.auth.id }

// Revoked reports whether err is the server closing a connection whose
// credential was revoked.
func Revoked(err error) bool { return errors.Is(err, nats.ErrAuthRevoked) }
