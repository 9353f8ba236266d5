package natsbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
	"go.uber.org/zap"
)

// Subjects of the credentials service: only the admin role may publish to
// them (no other grant names them).
const (
	IssueSubject  = "flotilla.admin.creds.issue"
	RevokeSubject = "flotilla.admin.creds.revoke"
)

// credentialsBucket records every credential issued by name: its role and
// user keys, and when each was revoked. Only the admin role reaches it.
const credentialsBucket = "FLOTILLA_CREDENTIALS"

// IssueRequest asks for a credential. The requester makes the key pair and
// sends only its public half: the seed never travels.
type IssueRequest struct {
	Role      string `json:"role"`
	Name      string `json:"name"`
	Cluster   string `json:"cluster,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	PublicKey string `json:"publicKey"`
}

type issueReply struct {
	JWT   string `json:"jwt,omitempty"`
	Error string `json:"error,omitempty"`
}

type revokeRequest struct {
	Name string `json:"name"`
}

type revokeReply struct {
	Revoked int    `json:"revoked"`
	Error   string `json:"error,omitempty"`
}

// credentialRecord is a name's entry in the credentials bucket.
type credentialRecord struct {
	Role string          `json:"role"`
	Keys []credentialKey `json:"keys"`
}

type credentialKey struct {
	PublicKey string    `json:"publicKey"`
	Issued    time.Time `json:"issued"`
	Revoked   time.Time `json:"revoked,omitzero"`
}

// GrantFunc says what a requested credential may do, or why it cannot be
// issued (an unknown role, a missing --cluster).
type GrantFunc func(IssueRequest) (Grant, error)

// CredentialService issues and revokes credentials for the running
// system: the process holding the Authority serves IssueSubject and
// RevokeSubject, so `flotilla creds` needs only admin credentials and the
// URL, never the data directory.
type CredentialService struct {
	bus    *Bus
	auth   *Authority
	grants GrantFunc
	kv     jetstream.KeyValue
	sys    *nats.Conn
	log    *zap.Logger
	subs   []*nats.Subscription
}

var credentialName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$`)

// NewCredentialService starts the service on bus (an admin connection):
// the credentials bucket, a system account connection for account updates
// and the subscriptions, answering until Run's context is done. It pushes the account's revocations once, so a revocation whose
// update was lost is in force again.
func NewCredentialService(ctx context.Context, bus *Bus, auth *Authority, grants GrantFunc) (*CredentialService, error) {
	// As many copies as the event streams: on a cluster a lost node must
	// not lose the names revocations are made by.
	var kv jetstream.KeyValue
	err := bus.whileForming(ctx, "bucket "+credentialsBucket, func() (err error) {
		kv, err = bus.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: credentialsBucket, History: 1, Storage: jetstream.FileStorage,
			Replicas: bus.replicasOf(ctx, "KV_"+credentialsBucket)})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("credentials bucket: %w", err)
	}
	j, seed, err := auth.systemUser()
	if err != nil {
		return nil, err
	}
	sys, err := nats.Connect(strings.Join(bus.nc.Servers(), ","), append([]nats.Option{nats.UserJWTAndSeed(j, seed), nats.Name("flotilla-credentials"), nats.MaxReconnects(-1)}, bus.tlsOpts...)...)
	if err != nil {
		return nil, fmt.Errorf("system account: %w", err)
	}
	s := &CredentialService{bus: bus, auth: auth, grants: grants, kv: kv, sys: sys, log: bus.log.Named("credentials")}
	if err := s.pushRevocations(ctx, false); err != nil {
		sys.Close()
		return nil, err
	}
	if err := s.serve(); err != nil {
		sys.Close()
		return nil, err
	}
	return s, nil
}

// Run stops answering when ctx is done.
func (s *CredentialService) Run(ctx context.Context) error {
	<-ctx.Done()
	s.Close()
	return nil
}

// Close stops answering and closes the system account connection.
func (s *CredentialService) Close() {
	for _, sub := range s.subs {
		_ = sub.Unsubscribe()
	}
	s.sys.Close()
}

// serve subscribes to the service's subjects (queue group: several
// processes holding the authority share the requests).
func (s *CredentialService) serve() error {
	handlers := map[string]func(context.Context, []byte) any{
		IssueSubject: func(ctx context.Context, data []byte) any {
			var req IssueRequest
			if err := json.Unmarshal(data, &req); err != nil {
				return issueReply{Error: "bad request: " + err.Error()}
			}
			j, err := s.Issue(ctx, req)
			if err != nil {
				return issueReply{Error: err.Error()}
			}
			return issueReply{JWT: j}
		},
		RevokeSubject: func(ctx context.Context, data []byte) any {
			var req revokeRequest
			if err := json.Unmarshal(data, &req); err != nil {
				return revokeReply{Error: "bad request: " + err.Error()}
			}
			n, err := s.Revoke(ctx, req.Name)
			if err != nil {
				return revokeReply{Error: err.Error()}
			}
			return revokeReply{Revoked: n}
		},
	}
	for subject, h := range handlers {
		sub, err := s.bus.nc.QueueSubscribe(subject, "flotilla-credentials", func(m *nats.Msg) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			raw, _ := json.Marshal(h(ctx, m.Data))
			_ = m.Respond(raw)
		})
		if err != nil {
			return err
		}
		s.subs = append(s.subs, sub)
	}
	return s.bus.nc.Flush()
}

// Issue signs a user JWT for req.PublicKey with the grant of req's role
// and records it under req.Name.
func (s *CredentialService) Issue(ctx context.Context, req IssueRequest) (string, error) {
	if !credentialName.MatchString(req.Name) {
		return "", fmt.Errorf("credential name %q: use letters, digits, - and _ (at most 63)", req.Name)
	}
	if !nkeys.IsValidPublicUserKey(req.PublicKey) {
		return "", fmt.Errorf("publicKey: not a user public key")
	}
	g, err := s.grants(req)
	if err != nil {
		return "", err
	}
	rec, rev, err := s.record(ctx, req.Name)
	if err != nil {
		return "", err
	}
	if len(rec.Keys) > 0 && rec.Role != req.Role {
		return "", fmt.Errorf("credential %q exists with role %s: revoke it or choose another name", req.Name, rec.Role)
	}
	j, err := s.auth.signUser(req.PublicKey, req.Name, req.Role, g)
	if err != nil {
		return "", err
	}
	rec.Role = req.Role
	rec.Keys = append(rec.Keys, credentialKey{PublicKey: req.PublicKey, Issued: time.Now().UTC()})
	if err := s.store(ctx, req.Name, rec, rev); err != nil {
		return "", err
	}
	s.log.Info("credential issued", zap.String("name", req.Name), zap.String("role", req.Role))
	return j, nil
}

// Revoke revokes every key issued under name and pushes the account
// update: new connections with them are refused at once, and the servers
// close the open ones as the update reaches them.
func (s *CredentialService) Revoke(ctx context.Context, name string) (int, error) {
	rec, rev, err := s.record(ctx, name)
	if err != nil {
		return 0, err
	}
	if len(rec.Keys) == 0 {
		return 0, fmt.Errorf("no credential named %q was issued", name)
	}
	n := 0
	// A second later than now: JWTs issued in this very second are revoked too.
	at := time.Now().UTC().Add(time.Second)
	for i := range rec.Keys {
		if rec.Keys[i].Revoked.IsZero() {
			rec.Keys[i].Revoked = at
			n++
		}
	}
	if err := s.store(ctx, name, rec, rev); err != nil {
		return 0, err
	}
	if err := s.pushRevocations(ctx, true); err != nil {
		return 0, err
	}
	s.log.Info("credential revoked", zap.String("name", name), zap.Int("keys", n))
	return n, nil
}

func (s *CredentialService) record(ctx context.Context, name string) (credentialRecord, uint64, error) {
	var rec credentialRecord
	var e jetstream.KeyValueEntry
	// Right after the bucket is made on a cluster its leader may not be
	// elected yet: "no responders" (the fault e2e's start met it).
	err := s.bus.whileForming(ctx, "bucket "+credentialsBucket, func() (err error) {
		e, err = s.kv.Get(ctx, name)
		return err
	})
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return rec, 0, nil
	}
	if err != nil {
		return rec, 0, fmt.Errorf("credentials bucket: %w", err)
	}
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		return rec, 0, fmt.Errorf("credentials bucket, %s: %w", name, err)
	}
	return rec, e.Revision(), nil
}

// store writes rec if name is still at revision rev: two services issuing
// under one name at once cannot lose a key.
func (s *CredentialService) store(ctx context.Context, name string, rec credentialRecord, rev uint64) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if rev == 0 {
		_, err = s.kv.Create(ctx, name, raw)
	} else {
		_, err = s.kv.Update(ctx, name, raw, rev)
	}
	if err != nil {
		return fmt.Errorf("credentials bucket, %s: %w (a concurrent change? try again)", name, err)
	}
	return nil
}

// pushRevocations signs the account JWT with every revoked key and sends
// it to the servers' resolver, which stores it and spreads it to every
// server of the cluster.
func (s *CredentialService) pushRevocations(ctx context.Context, everyServer bool) error {
	revoked := map[string]time.Time{}
	lister, err := s.kv.ListKeys(ctx)
	if err != nil {
		return fmt.Errorf("credentials bucket: %w", err)
	}
	for name := range lister.Keys() {
		rec, _, err := s.record(ctx, name)
		if err != nil {
			return err
		}
		for _, k := range rec.Keys {
			if !k.Revoked.IsZero() {
				revoked[k.PublicKey] = k.Revoked
			}
		}
	}
	j, err := s.auth.accountJWT(revoked)
	if err != nil {
		return err
	}
	return s.spreadAccountJWT(j, everyServer)
}

// spreadAccountJWT sends an account JWT to the servers' resolvers and
// waits until every server the connection knows (discovered routes
// included) has stored it, so a revocation refuses the credential on every
// node when this returns, not a moment later. A server whose interest in
// the update subject has not yet crossed a route (a cluster still settling
// its routes) misses a single send and would only catch up at the
// resolvers' next sync, a minute later; so the update is sent again, a
// stored JWT being stored again unchanged, until every known server has
// answered or updateDeadline passes. A server that left the cluster never
// answers: then it returns with the servers that did. Without everyServer
// (a service starting, which only re-asserts what the resolvers already
// hold) one round with at least one answer is enough.
func (s *CredentialService) spreadAccountJWT(j string, everyServer bool) error {
	inbox := s.sys.NewRespInbox()
	replies, err := s.sys.SubscribeSync(inbox)
	if err != nil {
		return fmt.Errorf("account update: %w", err)
	}
	defer replies.Unsubscribe()
	answered := map[string]bool{}
	deadline := time.Now().Add(updateDeadline)
	for time.Now().Before(deadline) {
		if err := s.sys.PublishRequest("$SYS.REQ.CLAIMS.UPDATE", inbox, []byte(j)); err != nil {
			return fmt.Errorf("account update: %w", err)
		}
		want := max(len(s.sys.Servers()), 1)
		resend := time.Now().Add(updateResend)
		for len(answered) < want {
			wait := min(time.Until(resend), time.Until(deadline))
			if wait <= 0 {
				break
			}
			m, err := replies.NextMsg(wait)
			if err != nil {
				break
			}
			var reply struct {
				Server *struct {
					ID string `json:"id"`
				} `json:"server"`
				Error *struct {
					Description string `json:"description"`
				} `json:"error"`
			}
			if err := json.Unmarshal(m.Data, &reply); err == nil && reply.Error != nil {
				return fmt.Errorf("account update refused: %s", reply.Error.Description)
			}
			id := strconv.Itoa(len(answered)) // a reply that names no server counts once
			if reply.Server != nil && reply.Server.ID != "" {
				id = reply.Server.ID
			}
			answered[id] = true
		}
		if len(answered) >= want || (!everyServer && len(answered) > 0) {
			return nil
		}
	}
	if len(answered) == 0 {
		return fmt.Errorf("account update: no server answered within %s", updateDeadline)
	}
	return nil
}

// How long a JWT update waits for every server, and how often it is sent
// again meanwhile.
const (
	updateDeadline = 6 * time.Second // inside the 10 s a `creds revoke` waits for its reply
	updateResend   = 2 * time.Second
)

// IssueCredentials asks the running system for a credential and returns
// it as a credentials file; the key pair is made here and its seed never
// leaves this process.
func (b *Bus) IssueCredentials(ctx context.Context, req IssueRequest) ([]byte, error) {
	return newCredentials(req, func(req IssueRequest) (string, error) {
		var reply issueReply
		if err := b.adminRequest(ctx, IssueSubject, req, &reply); err != nil {
			return "", err
		}
		if reply.Error != "" {
			return "", errors.New(reply.Error)
		}
		return reply.JWT, nil
	})
}

// Credentials issues a credential in the service's own process (`flotilla
// up` writing the admin credentials), recorded like any other.
func (s *CredentialService) Credentials(ctx context.Context, req IssueRequest) ([]byte, error) {
	return newCredentials(req, func(req IssueRequest) (string, error) { return s.Issue(ctx, req) })
}

// newCredentials makes a user key pair, has sign sign req for its public
// key and returns the credentials file.
func newCredentials(req IssueRequest, sign func(IssueRequest) (string, error)) ([]byte, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	req.PublicKey = publicKey(kp)
	j, err := sign(req)
	if err != nil {
		return nil, err
	}
	seed, err := kp.Seed()
	if err != nil {
		return nil, err
	}
	return jwt.FormatUserConfig(j, seed)
}

// RevokeCredentials revokes every key issued under name and returns how
// many were still valid.
func (b *Bus) RevokeCredentials(ctx context.Context, name string) (int, error) {
	var reply revokeReply
	if err := b.adminRequest(ctx, RevokeSubject, revokeRequest{Name: name}, &reply); err != nil {
		return 0, err
	}
	if reply.Error != "" {
		return 0, errors.New(reply.Error)
	}
	return reply.Revoked, nil
}

func (b *Bus) adminRequest(ctx context.Context, subject string, req, reply any) error {
	raw, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	m, err := b.nc.RequestWithContext(ctx, subject, raw)
	if errors.Is(err, nats.ErrNoResponders) {
		return errors.New("no credentials service answers: is `flotilla up` running with authentication on (not --insecure)?")
	}
	if err != nil {
		return fmt.Errorf("%s: %w", subject, err)
	}
	return json.Unmarshal(m.Data, reply)
}
