// Thrown inside a transaction of keys and bundles (Stores.writeAll) when a bundle's stored version
// is no longer the one its checks read: it rolls the whole transaction back, and writeAll answers false.
export class StoredVersionMoved extends Error {}
