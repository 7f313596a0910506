package mysql

import (
	"strings"
	"testing"
)

// A design other than InnoDB is refused by name before any connection; the
// default ("") and InnoDB pass.
func TestValidateDesign(t *testing.T) {
	base := Config{URL: "mysql://root@127.0.0.1:3306/", Namespace: "sb_design"}
	for _, d := range []string{"", DesignInnoDB} {
		c := base
		c.Design = d
		if err := c.Validate(); err != nil {
			t.Errorf("design %q: %v", d, err)
		}
	}
	c := base
	c.Design = "myisam"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), `unknown design "myisam" (have innodb)`) {
		t.Errorf("design myisam: %v", err)
	}
}
