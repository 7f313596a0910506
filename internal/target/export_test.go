package target

// For the external tests (scenario_test.go), which the scenario package's
// import of this one keeps outside it.
var (
	TestRegistry   = testRegistry
	PasswordShapes = passwordShapes
)

const Secret = secret
