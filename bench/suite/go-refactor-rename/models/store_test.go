package models

import "testing"

func TestStore(t *testing.T) {
	s := NewStore()
	s.Add(NewUser("Ada", "ada@example.com"))
	var u User
	u, ok := s.Get("ada@example.com")
	if !ok || u.Name != "Ada" {
		t.Fatalf("got %+v, %v", u, ok)
	}
}
