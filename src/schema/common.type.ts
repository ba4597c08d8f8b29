import { Field, ObjectType, type ClassType } from "type-graphql";

@ObjectType({ description: "Relay page information." })
export class PageInfo {
  @Field(() => Boolean)
  hasNextPage!: boolean;

  @Field(() => String, { nullable: true, description: "Pass as `after` to get the next page." })
  endCursor!: string | null;
}

/**
 * A Relay connection of `node` objects: the `<name>Edge` and `<name>Connection` types, declared
 * once here for every list of the API.
 */
export function connectionTypes<T extends object>(node: ClassType<T>, name: string) {
  @ObjectType(`${name}Edge`)
  class Edge {
    @Field(() => String)
    cursor!: string;

    @Field(() => node)
    node!: T;
  }

  @ObjectType(`${name}Connection`)
  class Connection {
    @Field(() => [Edge])
    edges!: Edge[];

    @Field(() => PageInfo)
    pageInfo!: PageInfo;
  }
  return { Edge, Connection };
}
