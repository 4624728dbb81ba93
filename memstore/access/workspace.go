package access

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// WorkspaceFile is the name of a workspace's metadata file, which holds its
// ACL.
const WorkspaceFile = "workspace.yaml"

// ParseACL reads the acl: key of a workspace.yaml. Missing content or a
// missing key is the empty ACL; malformed YAML is an error, so that a
// broken file never reads as "nobody is restricted".
func ParseACL(workspaceYAML []byte) (ACL, error) {
	var doc struct {
		ACL ACL `yaml:"acl"`
	}
	if len(workspaceYAML) == 0 {
		return ACL{}, nil
	}
	if err := yaml.Unmarshal(workspaceYAML, &doc); err != nil {
		return ACL{}, fmt.Errorf("workspace.yaml: %w", err)
	}
	return doc.ACL, nil
}
