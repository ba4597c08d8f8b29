import { Field, ObjectType } from "type-graphql";

@ObjectType({ description: "Relay page information." })
export class PageInfo {
  @Field(() => Boolean)
  hasNextPage!: boolean;

  @Field(() => String, { nullable: true, description: "Pass as `after` to get the next page." })
  endCursor!: string | null;
}
