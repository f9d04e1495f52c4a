package tools

import "encoding/json"

// builtinList is every tool implemented in this package. Add new tools here.
func builtinList() []Tool {
	return []Tool{
		readFile{}, readFilePartial{}, writeFile{}, editFile{},
		listDirectory{}, globFiles{}, searchText{}, repoMap{},
		runShell{}, checker{name: "typecheck"}, checker{name: "test"},
		askHuman{},
		writePlan{}, readPlan{}, readRunLog{}, searchRunLog{},
		gitInit{}, gitCommit{}, gitBranch{}, gitSetBase{},
		gitChangesSinceBase{}, gitUncommittedChanges{}, gitRestore{},
		fetchURL{}, webSearch{},
	}
}

// manifestOf reads the embedded default manifest of a built-in tool. The
// manifests are compiled in and checked by the package tests, so a failure
// here is a build defect; the name alone is returned then.
func manifestOf(name string) Manifest {
	b, err := manifestFS.ReadFile("manifests/" + name + ".json")
	if err != nil {
		return Manifest{Name: name}
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{Name: name}
	}
	return m
}
