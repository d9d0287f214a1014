//! Neo4j store: placeholder until the implementation lands from its branch.

use async_trait::async_trait;

use super::{Record, Store, StoreError, StoreResult};
use crate::domain::*;

pub struct Neo4jStore;

impl Neo4jStore {
    pub async fn connect(_uri: &str, _user: &str, _password: &str, _database: Option<&str>) -> StoreResult<Self> {
        Err(StoreError::Unavailable("the Neo4j store is not built yet".into()))
    }
}

#[async_trait]
impl Store for Neo4jStore {
    fn kind(&self) -> &'static str {
        "neo4j"
    }
    async fn ping(&self) -> StoreResult<()> {
        unimplemented!()
    }
    async fn upsert_datastore(&self, _: DatastoreInput) -> StoreResult<Datastore> {
        unimplemented!()
    }
    async fn datastores_by_ids(&self, _: &[Id]) -> StoreResult<Vec<Datastore>> {
        unimplemented!()
    }
    async fn list_datastores(&self) -> StoreResult<Vec<Datastore>> {
        unimplemented!()
    }
    async fn delete_datastore(&self, _: Id) -> StoreResult<bool> {
        unimplemented!()
    }
    async fn upsert_container(&self, _: ContainerInput) -> StoreResult<(Container, Vec<Field>)> {
        unimplemented!()
    }
    async fn containers_by_ids(&self, _: &[Id]) -> StoreResult<Vec<Container>> {
        unimplemented!()
    }
    async fn list_containers(&self, _: Option<Id>, _: Option<&str>, _: PageRequest) -> StoreResult<Page<Container>> {
        unimplemented!()
    }
    async fn delete_container(&self, _: Id) -> StoreResult<bool> {
        unimplemented!()
    }
    async fn fields_by_ids(&self, _: &[Id]) -> StoreResult<Vec<Field>> {
        unimplemented!()
    }
    async fn container_fields(&self, _: Id, _: Option<&str>, _: PageRequest) -> StoreResult<Page<Field>> {
        unimplemented!()
    }
    async fn delete_field(&self, _: Id) -> StoreResult<bool> {
        unimplemented!()
    }
    async fn container_stats(&self, _: &[Id]) -> StoreResult<Vec<ContainerStats>> {
        unimplemented!()
    }
    async fn fields_with_lineage(&self, _: &[Id]) -> StoreResult<Vec<Id>> {
        unimplemented!()
    }
    async fn create_edges(&self, _: Vec<NewEdge>, _: bool, _: Timestamp) -> StoreResult<Vec<Edge>> {
        unimplemented!()
    }
    async fn live_container_edge_exists(&self, _: Id, _: Id) -> StoreResult<bool> {
        unimplemented!()
    }
    async fn update_edge(&self, _: Id, _: EdgePatch) -> StoreResult<Option<Edge>> {
        unimplemented!()
    }
    async fn retire_edges(&self, _: &[Id], _: Timestamp) -> StoreResult<()> {
        unimplemented!()
    }
    async fn delete_edges(&self, _: &[Id]) -> StoreResult<()> {
        unimplemented!()
    }
    async fn edges_by_ids(&self, _: &[Id]) -> StoreResult<Vec<Edge>> {
        unimplemented!()
    }
    async fn list_edges(&self, _: &EdgeFilter, _: PageRequest) -> StoreResult<Page<Edge>> {
        unimplemented!()
    }
    async fn edges_touching_containers(&self, _: &[Id]) -> StoreResult<Vec<Edge>> {
        unimplemented!()
    }
    async fn edges_touching_fields(&self, _: &[Id]) -> StoreResult<Vec<Edge>> {
        unimplemented!()
    }
    async fn evidence_for_edges(&self, _: &[Id]) -> StoreResult<Vec<Evidence>> {
        unimplemented!()
    }
    async fn put_evidence(&self, _: Vec<Evidence>) -> StoreResult<()> {
        unimplemented!()
    }
    async fn container_edges_of(&self, _: &[Id], _: Direction) -> StoreResult<Vec<Edge>> {
        unimplemented!()
    }
    async fn field_edges_of(&self, _: &[Id], _: Direction) -> StoreResult<Vec<Edge>> {
        unimplemented!()
    }
    async fn export(&self) -> StoreResult<Vec<Record>> {
        unimplemented!()
    }
    async fn import(&self, _: Vec<Record>) -> StoreResult<usize> {
        unimplemented!()
    }
}

impl Neo4jStore {
    pub async fn wipe(&self) -> StoreResult<()> {
        unimplemented!()
    }
}
