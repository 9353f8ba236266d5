package natsbus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Authority holds the keys that sign Flotilla's NATS identities (DESIGN.md
// decision 18): an operator, the system account the servers use for their
// own traffic (account updates included), and the FLOTILLA account every
// daemon and user connects to. Users are never written into a server's
// configuration: each carries a user JWT signed by the account key, with its
// permissions inside, and the servers trust the account through its JWT,
// which the resolver keeps and which Revoke replaces at run time.
type Authority struct {
	operator, system, account nkeys.KeyPair
}

// Seeds of the authority, under its directory, each mode 0600.
const (
	operatorSeedFile = "operator.nk"
	systemSeedFile   = "system.nk"
	accountSeedFile  = "account.nk"
)

// LoadOrCreateAuthority reads the authority's seeds from dir, creating any
// that is missing (dir too, mode 0700): the first `flotilla up` generates
// them, later ones reuse them, so credentials issued before a restart stay
// valid.
func LoadOrCreateAuthority(dir string) (*Authority, error) { return loadAuthority(dir, true) }

// LoadAuthority reads the authority LoadOrCreateAuthority made in dir, and
// fails if any seed is missing: the nodes of a cluster must share one
// authority, so none of them may make its own.
func LoadAuthority(dir string) (*Authority, error) { return loadAuthority(dir, false) }

func loadAuthority(dir string, create bool) (*Authority, error) {
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("authority: %w", err)
		}
	}
	a := &Authority{}
	for _, k := range []struct {
		file   string
		create func() (nkeys.KeyPair, error)
		into   *nkeys.KeyPair
	}{
		{operatorSeedFile, nkeys.CreateOperator, &a.operator},
		{systemSeedFile, nkeys.CreateAccount, &a.system},
		{accountSeedFile, nkeys.CreateAccount, &a.account},
	} {
		mk := k.create
		if !create {
			mk = nil
		}
		kp, err := loadOrCreateSeed(filepath.Join(dir, k.file), mk)
		if err != nil {
			return nil, err
		}
		*k.into = kp
	}
	return a, nil
}

// loadOrCreateSeed reads the seed in path, or makes one with create and
// writes it there (create nil: a missing seed is an error).
func loadOrCreateSeed(path string, create func() (nkeys.KeyPair, error)) (nkeys.KeyPair, error) {
	raw, err := os.ReadFile(path)
	if err == nil {
		kp, err := nkeys.FromSeed(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: not an nkey seed: %w", path, err)
		}
		return kp, nil
	}
	if !errors.Is(err, os.ErrNotExist) || create == nil {
		return nil, fmt.Errorf("authority: %w", err)
	}
	kp, err := create()
	if err != nil {
		return nil, err
	}
	seed, err := kp.Seed()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, seed, 0o600); err != nil {
		return nil, fmt.Errorf("authority: %w", err)
	}
	return kp, nil
}

func publicKey(kp nkeys.KeyPair) string {
	pub, _ := kp.PublicKey() // a key pair made from a seed always has one
	return pub
}

// AccountKey is the public key of the FLOTILLA account; JetStream stores
// that account's streams under a directory of this name.
func (a *Authority) AccountKey() string { return publicKey(a.account) }

func (a *Authority) operatorJWT() (string, error) {
	oc := jwt.NewOperatorClaims(publicKey(a.operator))
	oc.Name = "flotilla"
	oc.SystemAccount = publicKey(a.system)
	return oc.Encode(a.operator)
}

func (a *Authority) systemAccountJWT() (string, error) {
	ac := jwt.NewAccountClaims(publicKey(a.system))
	ac.Name = "SYS"
	return ac.Encode(a.operator)
}

// accountJWT is the FLOTILLA account's JWT: JetStream without limits,
// and every user key in revoked refused from the time given.
func (a *Authority) accountJWT(revoked map[string]time.Time) (string, error) {
	ac := jwt.NewAccountClaims(a.AccountKey())
	ac.Name = "FLOTILLA"
	ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1, MaxAckPending: -1,
		MemoryMaxStreamBytes: -1, DiskMaxStreamBytes: -1}
	for pub, at := range revoked {
		ac.RevokeAt(pub, at)
	}
	return ac.Encode(a.operator)
}

// configure puts the server in operator mode: it trusts the authority's
// operator and resolves accounts from a full resolver beside the server's
// JetStream store (accounts/, where account updates, revocations included, are kept across restarts
// and, in a cluster, spread to every server). The accounts are stored there
// only when missing, so a restart keeps the revocations of the last update.
func (a *Authority) configure(opts *server.Options) error {
	opJWT, err := a.operatorJWT()
	if err != nil {
		return err
	}
	oc, err := jwt.DecodeOperatorClaims(opJWT)
	if err != nil {
		return err
	}
	res, err := server.NewDirAccResolver(filepath.Join(opts.StoreDir, "accounts"), 0, time.Minute, server.NoDelete)
	if err != nil {
		return fmt.Errorf("account resolver: %w", err)
	}
	for pub, encode := range map[string]func() (string, error){
		publicKey(a.system): a.systemAccountJWT,
		a.AccountKey():      func() (string, error) { return a.accountJWT(nil) },
	} {
		if stored, _ := res.LoadAcc(pub); stored != "" {
			continue
		}
		j, err := encode()
		if err != nil {
			return err
		}
		if err := res.Store(pub, j); err != nil {
			return fmt.Errorf("account resolver: %w", err)
		}
	}
	if err := adoptStore(opts.StoreDir, globalAccount, a.AccountKey()); err != nil {
		return err
	}
	// A user JWT carries its permissions, and a daemon's run to several
	// kilobytes: more than the default 4 KiB a CONNECT line may have.
	opts.MaxControlLine = MaxControlLine
	opts.TrustedOperators = []*jwt.OperatorClaims{oc}
	opts.SystemAccount = publicKey(a.system)
	opts.AccountResolver = res
	return nil
}

// UserCredentials is a credentials file (a user JWT and its nkey seed, the
// format nats.UserCredentials reads) for a new user named name holding g.
func (a *Authority) UserCredentials(name, role string, g Grant) ([]byte, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	j, err := a.signUser(publicKey(kp), name, role, g)
	if err != nil {
		return nil, err
	}
	seed, err := kp.Seed()
	if err != nil {
		return nil, err
	}
	return jwt.FormatUserConfig(j, seed)
}

// signUser signs a user JWT for the user key pub: its name, its role (a
// tag, so refusals can name it) and the permissions of g, replies included
// only on its own inbox prefix.
func (a *Authority) signUser(pub, name, role string, g Grant) (string, error) {
	return userClaims(pub, name, role, g).Encode(a.account)
}

func userClaims(pub, name, role string, g Grant) *jwt.UserClaims {
	uc := jwt.NewUserClaims(pub)
	uc.Name = name
	uc.Tags.Add(roleTag + role)
	p := g.Permissions(pub)
	uc.Pub.Allow.Add(p.Publish...)
	uc.Pub.Deny.Add(p.PublishDeny...)
	uc.Sub.Allow.Add(p.Subscribe...)
	uc.Sub.Deny.Add(p.SubscribeDeny...)
	return uc
}

// memoryUser is a user of the FLOTILLA account that exists only in the
// memory of the process that signed it.
type memoryUser struct {
	jwt, seed string
	id        Identity
}

// options are the connection options of the user.
func (u *memoryUser) options() []nats.Option {
	return []nats.Option{nats.UserJWTAndSeed(u.jwt, u.seed), nats.CustomInboxPrefix(u.id.Inbox)}
}

// adminInMemory signs an admin user named name that expires after
// validFor, for a process holding the authority to connect before any
// credentials file exists (a cluster being set up). It is never written
// down and never recorded, so it cannot be revoked: hence the expiry.
func (a *Authority) adminInMemory(name string, validFor time.Duration) (*memoryUser, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	pub := publicKey(kp)
	uc := userClaims(pub, name, "admin", Grant{All: true})
	uc.Expires = time.Now().Add(validFor).Unix()
	j, err := uc.Encode(a.account)
	if err != nil {
		return nil, err
	}
	seed, err := kp.Seed()
	if err != nil {
		return nil, err
	}
	return &memoryUser{jwt: j, seed: string(seed), id: Identity{Name: name, Role: "admin", Inbox: InboxPrefix(pub), Key: pub}}, nil
}

// ConnectAdmin connects to url (a cluster's comma-separated URLs) as an
// admin the authority signs in memory for this connection, valid for an
// hour: `make nats-cluster` records the cluster's first admin credentials
// on it.
func (a *Authority) ConnectAdmin(ctx context.Context, url string, o Options) (*Bus, error) {
	u, err := a.adminInMemory("flotilla-authority", time.Hour)
	if err != nil {
		return nil, err
	}
	o.user = u
	return Connect(ctx, url, o)
}

// systemUser is a user of the system account (its JWT and seed), which
// pushes account updates ($SYS.REQ.CLAIMS.UPDATE).
func (a *Authority) systemUser() (string, string, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return "", "", err
	}
	uc := jwt.NewUserClaims(publicKey(kp))
	uc.Name = "flotilla-system"
	j, err := uc.Encode(a.system)
	if err != nil {
		return "", "", err
	}
	seed, err := kp.Seed()
	return j, string(seed), err
}

// MaxControlLine is the longest protocol line a server with
// authentication must accept (max_control_line in a server's config): a
// CONNECT with the longest role's user JWT fits with room to grow.
const MaxControlLine = 64 << 10

// roleTag prefixes the user JWT tag that names the credential's role.
const roleTag = "role:"

// InboxPrefix is the inbox prefix of the user whose public key is pub: each
// credential may subscribe to replies under its own prefix only, so none
// can read replies meant for another.
func InboxPrefix(pub string) string { return "_INBOX." + pub }

// globalAccount is the account of every connection to a server without
// authentication.
const globalAccount = "$G"

// adoptStore moves JetStream's store of one account to another's name when
// only the first has one, so a data directory made by an insecure `up`
// (JetStream's global account, "$G") keeps its streams once authentication
// is on.
func adoptStore(storeDir, from, to string) error {
	src, dst := filepath.Join(storeDir, "jetstream", from), filepath.Join(storeDir, "jetstream", to)
	if _, err := os.Stat(src); err != nil {
		return nil
	}
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	if err := os.Rename(src, dst); err != nil {
		return fmt.Errorf("move JetStream data of account %s to %s: %w", from, to, err)
	}
	return nil
}

// secure configures opts for auth (nil: authentication off).
func secure(opts *server.Options, auth *Authority) error {
	if auth == nil {
		return nil
	}
	return auth.configure(opts)
}
