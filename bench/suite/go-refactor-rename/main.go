package main

import (
	"fmt"

	"example.com/accounts/models"
)

func main() {
	s := models.NewStore()
	s.Add(models.NewUsr("Ada", "ada@example.com"))
	u, _ := s.Get("ada@example.com")
	fmt.Println(describe(u))
}

func describe(u models.Usr) string { return u.Name + " <" + u.Email + ">" }
