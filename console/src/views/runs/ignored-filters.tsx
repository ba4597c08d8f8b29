/** Above the runs list: the address's filters that are none (`/runs?status=BOGUS`), with what is allowed. */
import { useMemo } from "react";
import { IgnoredFiltersNotice } from "../../ui/ignored-filters";
import { ignoredFilters } from "./filters";

export function IgnoredFilters({ search }: { search: string }) {
  const lines = useMemo(() => ignoredFilters(search), [search]);
  return <IgnoredFiltersNotice lines={lines} />;
}
