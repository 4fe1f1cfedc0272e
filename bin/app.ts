#!/usr/bin/env node
import { App } from "aws-cdk-lib";
import { buildApp } from "../lib/app.ts";

// The stack, and cdk-nag's AwsSolutionsChecks on the whole app, come from lib/app.ts (shared with test/infra).
buildApp(new App());
