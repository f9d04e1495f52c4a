// Command hello greets someone.
package main

import (
	"flag"
	"fmt"
)

func main() {
	name := flag.String("name", "World", "who to greet")
	flag.Parse()
	fmt.Println(greeting(*name))
}

func greeting(name string) string {
	return "Hello, " + name + "!"
}
