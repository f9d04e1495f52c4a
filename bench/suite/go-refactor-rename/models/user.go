package models

// Usr is an account holder.
type Usr struct {
	Name  string
	Email string
}

// NewUsr makes a Usr.
func NewUsr(name, email string) Usr { return Usr{Name: name, Email: email} }
