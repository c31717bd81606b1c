// A project belongs to the organization of its bundles: the store refuses a bundle that would
// give a project a second owner, and the server refuses events naming another org's project.

export class ProjectOwnedElsewhere extends Error {
  constructor(
    readonly projectId: string,
    readonly ownerOrgId: string,
  ) {
    super(`project ${projectId} belongs to organization ${ownerOrgId}; a bundle of another organization cannot name it`);
    this.name = "ProjectOwnedElsewhere";
  }
}
