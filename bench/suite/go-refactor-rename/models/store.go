package models

// Store keeps users by email.
type Store struct{ byEmail map[string]Usr }

// NewStore makes an empty store.
func NewStore() *Store { return &Store{byEmail: map[string]Usr{}} }

// Add keeps u.
func (s *Store) Add(u Usr) { s.byEmail[u.Email] = u }

// Get finds a user by email.
func (s *Store) Get(email string) (Usr, bool) {
	u, ok := s.byEmail[email]
	return u, ok
}
