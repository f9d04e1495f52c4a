//go:build !linux

package store

func exchange(a, b string) error { return errNoExchange }
